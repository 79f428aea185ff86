package synth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"

	"github.com/streamfit/streamfit/stream"
)

// LDAConfig describes a corpus drawn from latent Dirichlet allocation (or, with
// Single, from the exchangeable single-topic model).
type LDAConfig struct {
	Docs  int64 // number of documents
	Vocab int   // vocabulary size d
	K     int   // number of topics
	// Alpha0 is the Dirichlet concentration α₀ = Σαᵢ (LDA only; default 1).
	Alpha0 float64
	// DocLen is the mean document length; lengths are Poisson(DocLen) but at least 3.
	DocLen float64
	// Beta is the symmetric Dirichlet parameter of the topics (default 0.1).
	Beta float64
	// Seed makes the corpus reproducible.
	Seed uint64
	// Single draws one topic per document (weights αᵢ/α₀) instead of a mixture.
	Single bool
	// BatchRows is the number of documents per batch (default stream.DefaultBatchRows).
	BatchRows int
	// Workers is the number of generating goroutines (default GOMAXPROCS); the
	// corpus does not depend on it.
	Workers int
	// Themes, when set, gives the corpus readable words: topic i is drawn
	// from theme i (the first K themes; K defaults to all of them), the
	// vocabulary is their words in order (Vocab must be 0 or their number),
	// and nine tenths of each topic's mass lies on its own theme's words.
	Themes []Theme
}

// Corpus is a generated corpus: a stream.DocSource whose every pass yields the
// same documents, drawn from Truth.
type Corpus struct {
	// Truth is the topic model the documents are drawn from.
	Truth TopicTruth
	// Params records how the documents were generated.
	Params map[string]any
	cfg    LDAConfig
	words  []alias  // one alias table per topic
	vocab  []string // the words, when drawn from themes
}

// NewLDA draws the topics and α of the model and returns the corpus source.
// Topics are Dirichlet(β) over the vocabulary; αᵢ are U(0.5, 1.5) draws scaled to
// sum to α₀ (for Single they are the topic weights, summing to 1).
func NewLDA(cfg LDAConfig) (*Corpus, error) {
	if cfg.Alpha0 == 0 {
		cfg.Alpha0 = 1
	}
	if cfg.Beta == 0 {
		cfg.Beta = 0.1
	}
	if cfg.BatchRows <= 0 {
		cfg.BatchRows = stream.DefaultBatchRows
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	vocab, err := themeVocab(&cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Docs < 0:
		return nil, errors.New("synth: negative number of documents")
	case cfg.K < 1 || cfg.Vocab < 2:
		return nil, fmt.Errorf("synth: need k ≥ 1 and a vocabulary of at least 2 words (k=%d, vocab=%d)", cfg.K, cfg.Vocab)
	case !finitePositive(cfg.Alpha0) || !finitePositive(cfg.Beta) || !finitePositive(cfg.DocLen):
		return nil, fmt.Errorf("synth: Alpha0=%g, Beta=%g and DocLen=%g must be finite and positive", cfg.Alpha0, cfg.Beta, cfg.DocLen)
	case cfg.Vocab > 1<<31-1:
		return nil, errors.New("synth: vocabulary too large for int32 term ids")
	}
	r := newRand(cfg.Seed, 0)
	t := TopicTruth{Model: "lda", K: cfg.K, D: cfg.Vocab, Alpha0: cfg.Alpha0, Alpha: make([]float64, cfg.K)}
	var s float64
	for i := range t.Alpha {
		t.Alpha[i] = 0.5 + r.Float64()
		s += t.Alpha[i]
	}
	scale := cfg.Alpha0
	if cfg.Single {
		t.Model, t.Alpha0, scale = "topic", 0, 1
	}
	for i := range t.Alpha {
		t.Alpha[i] *= scale / s
	}
	c := &Corpus{cfg: cfg, words: make([]alias, cfg.K), vocab: vocab}
	t.Topics = make([][]float64, cfg.K)
	for i := range t.Topics {
		t.Topics[i] = make([]float64, cfg.Vocab)
		dirichlet(r, t.Topics[i], []float64{cfg.Beta})
		if vocab != nil {
			themeTopic(r, t.Topics[i], cfg.Themes, i)
		}
		c.words[i].build(t.Topics[i])
	}
	c.Truth = t
	c.Params = map[string]any{"docs": cfg.Docs, "doc_len": cfg.DocLen, "beta": cfg.Beta, "seed": cfg.Seed}
	return c, nil
}

// Info describes the corpus.
func (c *Corpus) Info() stream.Info {
	return stream.Info{Format: "generated", Layout: c.Truth.Model, Terms: c.cfg.Vocab, Vocab: c.vocab, Rows: c.cfg.Docs, NNZ: -1}
}

// Docs generates one pass over the corpus.
func (c *Corpus) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	n, step := c.cfg.Docs, int64(c.cfg.BatchRows)
	blocks := (n + step - 1) / step
	split := func(ctx context.Context, emit func(int64) bool) error {
		for b := int64(0); b < blocks && emit(b); b++ {
		}
		return nil
	}
	gen := func(ctx context.Context, b int64) (*stream.Docs, error) {
		lo := b * step
		return c.block(lo, min(lo+step, n), b), nil
	}
	return stream.Ordered(ctx, c.cfg.Workers, split, gen, (*stream.Docs).Release)
}

// scratch is a generator's per-block working memory.
type scratch struct {
	count []int32
	seen  []int32
	h     []float64
	topic alias
}

// block draws documents lo..hi-1, which form block b.
func (c *Corpus) block(lo, hi, b int64) *stream.Docs {
	r := newRand(c.cfg.Seed, uint64(b)+1)
	k := c.cfg.K
	s := scratch{count: make([]int32, c.cfg.Vocab), h: make([]float64, k)}
	out := stream.NewDocs(lo)
	for range hi - lo {
		length := max(poisson(r, c.cfg.DocLen), 3)
		if c.Truth.Model == "topic" {
			if k > 1 && s.topic.prob == nil {
				s.topic.build(c.Truth.Alpha)
			}
			z := int32(0)
			if k > 1 {
				z = s.topic.draw(r)
			}
			for range length {
				s.add(c.words[z].draw(r))
			}
		} else {
			dirichlet(r, s.h, c.Truth.Alpha)
			s.topic.build(s.h)
			for range length {
				s.add(c.words[s.topic.draw(r)].draw(r))
			}
		}
		slices.Sort(s.seen)
		for _, w := range s.seen {
			out.Add(w, s.count[w])
			s.count[w] = 0
		}
		out.EndDoc()
		s.seen = s.seen[:0]
	}
	return out
}

func (s *scratch) add(w int32) {
	if s.count[w] == 0 {
		s.seen = append(s.seen, w)
	}
	s.count[w]++
}

// finitePositive reports whether x is a finite number > 0 (not NaN).
func finitePositive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// WriteTruth stores Truth with Params as JSON, atomically, encoding the
// topics one row at a time (a 100,000-word vocabulary with k=100 is 10⁷
// probabilities): a file that reads as a model (streamfit eval
// --truth).
func (c *Corpus) WriteTruth(path string) error {
	head := c.Truth
	head.Topics = nil
	return WriteTruth(path, &head, c.Params, c.Truth.Topics)
}
