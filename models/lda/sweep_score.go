package lda

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/streamfit/streamfit/models/coherence"
	"github.com/streamfit/streamfit/stream"
)

// scoreSweep scores every model of sw: held-out perplexity on held (one
// read per model: the held-out documents are a tenth of the corpus or
// the caller's), coherence and diversity over train (one read for all the
// models: their topics are scored together), and sets the recommendation.
func scoreSweep(ctx context.Context, sw *Sweep, train, held stream.DocSource, cfg Config, opt SweepOptions) error {
	var all [][]float64
	for i, m := range sw.Models {
		h, err := Perplexity(ctx, held, m.Topics, m.Alpha, ScoreOptions{Single: cfg.Single, Workers: cfg.Workers})
		if err != nil {
			return fmt.Errorf("lda: scoring k=%d on the held-out documents: %w", m.K, err)
		}
		sw.Scores[i].HeldOut, sw.Scores[i].Perplexity = h, h.Perplexity
		all = append(all, m.Topics...)
	}
	top := opt.Top
	if top <= 0 {
		top = coherence.DefaultTop
	}
	c, err := coherence.Score(ctx, train, all, coherence.Options{Top: top, Workers: cfg.Workers})
	if err != nil {
		return fmt.Errorf("lda: coherence: %w", err)
	}
	at := 0
	for i, m := range sw.Models {
		s := &sw.Scores[i]
		s.UMass, s.NPMI = mean(c.TopicUMass[at:at+m.K]), mean(c.TopicNPMI[at:at+m.K])
		s.Diversity = coherence.Diversity(c.TopWords[at : at+m.K])
		at += m.K
	}
	within := opt.Within
	if within <= 0 {
		within = DefaultWithin
	}
	sw.Recommended, sw.Rule = recommend(sw.Scores, within)
	return nil
}

// recommend returns the smallest k whose held-out perplexity is within the
// share within of the lowest (the curve of perplexity against k flattens
// past the topics the data hold: more topics then fit noise at the cost of
// every model's size), and the rule in words.
func recommend(scores []KScore, within float64) (int, string) {
	best := math.Inf(1)
	for _, s := range scores {
		best = min(best, s.Perplexity)
	}
	k := 0
	for _, s := range scores {
		if s.Perplexity <= best*(1+within) && (k == 0 || s.K < k) {
			k = s.K
		}
	}
	return k, fmt.Sprintf("the smallest k whose held-out perplexity is within %g%% of the lowest (%.4g)", within*100, best)
}

// mean is the mean of v (0 for none).
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// heldOutEvery is the share of the training documents FitK holds out
// when no held-out source is given: document i when i mod heldOutEvery
// is heldOutEvery−1.
const heldOutEvery = 10

// heldOutSplit is one part of a source split for FitK's held-out score:
// its every heldOutEvery-th document (held), or the others. The documents
// of a part are numbered from 0 in order, as those of a source of their
// own.
type heldOutSplit struct {
	src  stream.DocSource
	held bool
}

func (s heldOutSplit) isHeld(i int64) bool { return i%heldOutEvery == heldOutEvery-1 }

// before is the number of the part's documents among the source's first n.
func (s heldOutSplit) before(n int64) int64 {
	if s.held {
		return n / heldOutEvery
	}
	return n - n/heldOutEvery
}

// Info is the source's, with the part's documents and an estimate of its
// entries.
func (s heldOutSplit) Info() stream.Info {
	info := s.src.Info()
	if info.Rows >= 0 {
		all := info.Rows
		info.Rows = s.before(all)
		if info.NNZ >= 0 && all > 0 {
			info.NNZ = int64(float64(info.NNZ) * float64(info.Rows) / float64(all))
		}
	}
	return info
}

// Docs reads the source and yields the part's documents, batch by batch.
func (s heldOutSplit) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		for b, err := range s.src.Docs(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			nb := stream.NewDocs(s.before(b.Start))
			for i := range b.Len() {
				if s.isHeld(b.Start+int64(i)) == s.held {
					nb.AppendDoc(b.Doc(i))
				}
			}
			b.Release()
			if !yield(nb, nil) {
				return
			}
		}
	}
}
