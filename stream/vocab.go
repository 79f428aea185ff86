package stream

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// ReadVocab reads a vocabulary file: one word per line, line i (1-based) naming
// term id i-1, as in the UCI bag-of-words vocab.*.txt files. Empty lines and
// duplicate words are errors, because they would make term ids ambiguous. A
// file in the text format of gensim's Dictionary.save_as_text (a document
// count, then "id<TAB>word<TAB>docfreq" lines, with or without the count)
// gives each word its id.
func ReadVocab(path string) ([]string, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, Errorf(path, 0, -1, "", ErrFormat, "is a directory, not a vocabulary file (one word per line)")
	}
	var words []string
	seen := map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line int64
	for sc.Scan() {
		line++
		w := strings.TrimRight(sc.Text(), "\r")
		if w == "" {
			return nil, Errorf(path, line, -1, "", ErrValue, "empty word in vocabulary")
		}
		if prev, dup := seen[w]; dup {
			return nil, Errorf(path, line, -1, "", ErrValue, "word %q already on line %d", w, prev)
		}
		seen[w] = line
		words = append(words, w)
	}
	if err := sc.Err(); err != nil {
		return nil, Errorf(path, line+1, -1, "", ErrCorrupt, "%v", err)
	}
	if len(words) == 0 {
		return nil, Errorf(path, 0, -1, "", ErrEmpty, "vocabulary file is empty")
	}
	if g, ok, err := gensimVocab(path, words); ok || err != nil {
		return g, err
	}
	return words, nil
}

// gensimVocab reads lines in the text format of gensim's
// Dictionary.save_as_text: the number of documents, then one line
// "id<TAB>word<TAB>document frequency" per word, in any order. ok is false
// when the lines are not in that format (a plain vocabulary); ids must
// then be 0..n−1, each once.
func gensimVocab(path string, lines []string) (words []string, ok bool, err error) {
	// The first line, the number of documents, is sometimes cut off (a
	// file cut by head or tail, or a hand-made one): the entries are
	// recognised without it.
	first := 1
	if len(lines) > 0 && strings.ContainsRune(lines[0], '\t') {
		first = 0
	} else if len(lines) < 2 {
		return nil, false, nil
	} else if _, err := strconv.ParseUint(lines[0], 10, 64); err != nil {
		return nil, false, nil
	}
	type entry struct {
		id   int
		word string
	}
	entries := make([]entry, 0, len(lines)-first)
	for _, l := range lines[first:] {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			return nil, false, nil
		}
		id, err1 := strconv.Atoi(f[0])
		_, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || f[1] == "" {
			return nil, false, nil
		}
		entries = append(entries, entry{id, f[1]})
	}
	words = make([]string, len(entries))
	seen := map[string]bool{}
	for i, e := range entries {
		line := int64(i + 1 + first)
		switch {
		case e.id < 0 || e.id >= len(words):
			return nil, true, Errorf(path, line, -1, "", ErrValue, "gensim dictionary: id %d outside 0..%d", e.id, len(words)-1)
		case words[e.id] != "":
			return nil, true, Errorf(path, line, -1, "", ErrValue, "gensim dictionary: id %d given twice", e.id)
		case seen[e.word]:
			return nil, true, Errorf(path, line, -1, "", ErrValue, "gensim dictionary: word %q given twice", e.word)
		}
		words[e.id] = e.word
		seen[e.word] = true
	}
	return words, true, nil
}

// FormatVocab lays words out as a vocabulary file: one per line.
func FormatVocab(words []string) []byte {
	var b bytes.Buffer
	for _, w := range words {
		b.WriteString(w)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// WriteVocab writes words one per line, atomically.
func WriteVocab(path string, words []string) error {
	return WriteFileAtomic(path, FormatVocab(words))
}
