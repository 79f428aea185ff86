package text

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// Defaults of BuildOptions.
const (
	// DefaultMinCount drops words seen fewer than 5 times in the corpus: they
	// are mostly typos and names, too rare to estimate a topic's weight on.
	DefaultMinCount = 5
	// DefaultMaxDocFreq drops words found in more than half of the documents:
	// like stop words, they say little about which topic a document is about.
	DefaultMaxDocFreq = 0.5
)

// BuildOptions are the filters of a vocabulary pass. The zero value means the
// defaults; the filters apply in the order listed.
type BuildOptions struct {
	// MinCount is the least total number of occurrences a word needs (default
	// DefaultMinCount; 1 keeps every word).
	MinCount int64
	// MinDocs is the least number of documents a word must occur in (0 or 1
	// keeps every word).
	MinDocs int64
	// MaxDocFreq is the largest fraction of documents a word may occur in
	// (default DefaultMaxDocFreq; 1 or more keeps every word).
	MaxDocFreq float64
	// MaxSize, when positive, keeps only that many of the most frequent
	// remaining words (0 keeps them all).
	MaxSize int
}

// Vocabulary is the result of Build: the kept words, most frequent first (ties
// broken by the words' byte order), with their statistics in the corpus.
type Vocabulary struct {
	// Words lists the kept words; term id i is Words[i].
	Words []string
	// Counts[i] is the total number of occurrences of Words[i].
	Counts []int64
	// DocFreq[i] is the number of documents Words[i] occurs in.
	DocFreq []int64
	// Docs is the number of documents read, Tokens the number of tokens
	// counted (after stop words), Distinct the number of distinct tokens
	// before the filters.
	Docs, Tokens, Distinct int64
}

// Build makes one pass over src, counting how often each token occurs and in
// how many documents, then keeps the words that pass b's filters, ordered by
// decreasing count and then by word. The order, and so every term id, depends
// only on the corpus and the settings, not on o.Workers or scheduling.
//
// Each of o.Workers goroutines counts into its own map and the maps are merged
// at the end. Memory therefore grows with the number of distinct tokens (times
// the number of workers, in the worst case), not with the number of documents:
// a few hundred bytes per distinct token, so tens of millions of distinct
// tokens need gigabytes. A custom TokenPattern that lets through long junk
// tokens (URLs, base64) is the usual way to get there.
func Build(ctx context.Context, src stream.TextSource, o stream.Options, b BuildOptions) (*Vocabulary, error) {
	o = o.WithDefaults()
	if b.MinCount <= 0 {
		b.MinCount = DefaultMinCount
	}
	if b.MaxDocFreq <= 0 {
		b.MaxDocFreq = DefaultMaxDocFreq
	}
	t, err := NewTokenizer(o)
	if err != nil {
		return nil, err
	}
	counters := make([]*counter, o.Workers)
	for w := range counters {
		counters[w] = newCounter()
	}
	seq := func(ctx context.Context) iter.Seq2[textBatch, error] {
		return func(yield func(textBatch, error) bool) {
			for t, err := range src.Texts(ctx) {
				if !yield(textBatch{t}, err) {
					return
				}
			}
		}
	}
	err = stream.Each(ctx, seq, o.Workers, func(w int, batch textBatch) error {
		c := counters[w]
		for i, text := range batch.Text {
			if i%64 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			c.add(t, batch.Start+int64(i), text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := counters[0]
	for _, c := range counters[1:] {
		all.merge(c)
	}
	v := all.filter(b)
	if len(v.Words) == 0 {
		return v, stream.Errorf(src.Info().Path, 0, -1, "", stream.ErrEmpty,
			"no word passes the filters (min count %d, min documents %d, max document frequency %g): %d distinct tokens in %d documents",
			b.MinCount, b.MinDocs, b.MaxDocFreq, v.Distinct, v.Docs)
	}
	return v, nil
}

// textBatch lets a text batch travel through stream.Each, which wants batches
// it can release; raw text has no memory to hand back.
type textBatch struct{ *stream.Texts }

func (textBatch) Release() {}

// counter holds one worker's token statistics. Words are interned once, on
// first sight; later occurrences are a map lookup without allocation.
type counter struct {
	index        map[string]int32
	words        []string
	count, df    []int64
	last         []int64 // the last document each word was seen in, for df
	buf          []byte
	docs, tokens int64
}

func newCounter() *counter { return &counter{index: map[string]int32{}} }

func (c *counter) add(t *Tokenizer, doc int64, text string) {
	c.docs++
	c.buf = t.each(text, c.buf, func(tok string) {
		c.tokens++
		id, ok := c.index[tok]
		if !ok {
			id = int32(len(c.words))
			w := strings.Clone(tok)
			c.index[w] = id
			c.words = append(c.words, w)
			c.count = append(c.count, 0)
			c.df = append(c.df, 0)
			c.last = append(c.last, -1)
		}
		c.count[id]++
		if c.last[id] != doc {
			c.last[id] = doc
			c.df[id]++
		}
	})
}

// merge adds o's statistics into c. A document is counted by one worker only,
// so document frequencies add up like counts.
func (c *counter) merge(o *counter) {
	c.docs += o.docs
	c.tokens += o.tokens
	for i, w := range o.words {
		id, ok := c.index[w]
		if !ok {
			id = int32(len(c.words))
			c.index[w] = id
			c.words = append(c.words, w)
			c.count = append(c.count, 0)
			c.df = append(c.df, 0)
			c.last = append(c.last, -1)
		}
		c.count[id] += o.count[i]
		c.df[id] += o.df[i]
	}
}

func (c *counter) filter(b BuildOptions) *Vocabulary {
	maxDF := b.MaxDocFreq * float64(c.docs)
	var keep []int32
	for id := range c.words {
		if c.count[id] < b.MinCount || c.df[id] < b.MinDocs {
			continue
		}
		if b.MaxDocFreq < 1 && float64(c.df[id]) > maxDF {
			continue
		}
		keep = append(keep, int32(id))
	}
	slices.SortFunc(keep, func(a, b int32) int {
		if r := cmp.Compare(c.count[b], c.count[a]); r != 0 {
			return r
		}
		return strings.Compare(c.words[a], c.words[b])
	})
	if b.MaxSize > 0 && len(keep) > b.MaxSize {
		keep = keep[:b.MaxSize]
	}
	v := &Vocabulary{
		Words:    make([]string, len(keep)),
		Counts:   make([]int64, len(keep)),
		DocFreq:  make([]int64, len(keep)),
		Docs:     c.docs,
		Tokens:   c.tokens,
		Distinct: int64(len(c.words)),
	}
	for i, id := range keep {
		v.Words[i], v.Counts[i], v.DocFreq[i] = c.words[id], c.count[id], c.df[id]
	}
	return v
}

// Write writes the words, one per line, atomically: the plain format of
// stream.WriteVocab and the UCI vocab.*.txt files, which stream.ReadVocab and
// OpenBag read back.
func (v *Vocabulary) Write(path string) error {
	if len(v.Words) == 0 {
		return fmt.Errorf("%s: refusing to write an empty vocabulary", path)
	}
	return stream.WriteVocab(path, v.Words)
}

// WriteTo writes the words, one per line, to w: the format of Write, for a
// caller that commits the file itself.
func (v *Vocabulary) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(stream.FormatVocab(v.Words))
	return int64(n), err
}

// WriteCounts writes the statistics as tab-separated values, atomically: a
// header line "word\tcount\tdocs", then one line per word in term id order.
// It is a companion for people and tools, e.g. "vocab.txt.counts" beside
// "vocab.txt"; nothing in streamfit needs it to read the vocabulary.
func (v *Vocabulary) WriteCounts(path string) error {
	var buf bytes.Buffer
	buf.WriteString("word\tcount\tdocs\n")
	for i, w := range v.Words {
		buf.WriteString(w)
		buf.WriteByte('\t')
		buf.WriteString(strconv.FormatInt(v.Counts[i], 10))
		buf.WriteByte('\t')
		buf.WriteString(strconv.FormatInt(v.DocFreq[i], 10))
		buf.WriteByte('\n')
	}
	return stream.WriteFileAtomic(path, buf.Bytes())
}
