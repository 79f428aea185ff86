package text

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

func init() { stream.SetTokenizer(OpenBag) }

// OpenBag turns raw text into bag-of-words documents against the vocabulary
// file o.VocabPath, tokenized as o says. It is the function stream.Open uses for
// raw text input, so text files, directories and Parquet/Arrow text columns
// all read as documents.
func OpenBag(src stream.TextSource, o stream.Options) (stream.DocSource, error) {
	if o.VocabPath == "" {
		return nil, stream.Errorf(src.Info().Path, 0, -1, "", stream.ErrNeedVocab, "pass a vocabulary file (build one from the same text)")
	}
	words, err := stream.ReadVocab(o.VocabPath)
	if err != nil {
		return nil, err
	}
	t, err := NewTokenizer(o)
	if err != nil {
		return nil, err
	}
	return NewBag(src, t, words, o.WithDefaults().Workers), nil
}

// NewBag turns raw text into bag-of-words documents against vocab (term id i
// is vocab[i], which must hold distinct words), using t. Tokens outside the
// vocabulary are dropped; each document lists its distinct term ids in
// increasing order with their counts. Tokenization runs on workers goroutines.
func NewBag(src stream.TextSource, t *Tokenizer, vocab []string, workers int) stream.DocSource {
	ids := make(map[string]int32, len(vocab))
	for i, w := range vocab {
		ids[w] = int32(i)
	}
	b := &Bag{src: src, tok: t, vocab: vocab, ids: ids, workers: workers}
	b.scratch.New = func() any { return &bagScratch{counts: make([]int32, len(vocab))} }
	return b
}

// Bag is the DocSource made by NewBag and OpenBag.
type Bag struct {
	src     stream.TextSource
	tok     *Tokenizer
	vocab   []string
	ids     map[string]int32
	workers int
	scratch sync.Pool // *bagScratch, one per busy worker
}

// bagScratch counts the terms of one document: a dense counter of vocabulary
// size, cleared through the list of ids it touched, so a document costs time
// proportional to its length, not to the vocabulary.
type bagScratch struct {
	counts  []int32
	touched []int32
	buf     []byte
}

// Info is the text source's, with the vocabulary.
func (b *Bag) Info() stream.Info {
	i := b.src.Info()
	i.Terms, i.Vocab, i.Layout, i.NNZ = len(b.vocab), b.vocab, "text", -1
	return i
}

// Docs makes one pass over the text source, tokenizing its batches in parallel
// and delivering them in order.
func (b *Bag) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	split := func(ctx context.Context, emit func(*stream.Texts) bool) error {
		for t, err := range b.src.Texts(ctx) {
			if err != nil {
				return err
			}
			if !emit(t) {
				return nil
			}
		}
		return nil
	}
	return stream.Ordered(ctx, b.workers, split, b.count, (*stream.Docs).Release)
}

func (b *Bag) count(ctx context.Context, t *stream.Texts) (*stream.Docs, error) {
	sc := b.scratch.Get().(*bagScratch)
	defer b.scratch.Put(sc)
	add := func(tok string) {
		if id, ok := b.ids[tok]; ok {
			if sc.counts[id] == 0 {
				sc.touched = append(sc.touched, id)
			}
			sc.counts[id]++
		}
	}
	out := stream.NewDocs(t.Start)
	for i, text := range t.Text {
		if i%64 == 0 && ctx.Err() != nil {
			out.Release()
			return nil, ctx.Err()
		}
		sc.buf = b.tok.each(text, sc.buf, add)
		slices.Sort(sc.touched)
		for _, id := range sc.touched {
			out.Add(id, sc.counts[id])
			sc.counts[id] = 0
		}
		sc.touched = sc.touched[:0]
		out.EndDoc()
	}
	return out, nil
}
