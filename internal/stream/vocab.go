package stream

import (
	"bufio"
	"bytes"
	"os"
	"strings"
)

// ReadVocab reads a vocabulary file: one word per line, line i (1-based) naming
// term id i-1, as in the UCI bag-of-words vocab.*.txt files. Empty lines and
// duplicate words are errors, because they would make term ids ambiguous.
func ReadVocab(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
	return words, nil
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
