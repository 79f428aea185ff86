package lda

import (
	"context"
	"sync"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// tracker counts passes and forwards progress to the caller's hook, one call
// at a time.
type tracker struct {
	mu     sync.Mutex
	hook   func(Progress)
	start  time.Time
	passes int
	docs   int64
}

func (t *tracker) begin() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.passes++
	t.docs = 0
	return t.passes
}

func (t *tracker) report(pass int, stage string, docs int, done bool) {
	if t.hook == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.docs += int64(docs)
	t.hook(Progress{Pass: pass, Stage: stage, Docs: t.docs, Done: done, Elapsed: time.Since(t.start)})
}

// pairOperator is the corrected second moment M2 = Ê2 − c·m̂m̂ᵀ (c = α₀/(α₀+1)
// for LDA, 0 for the single-topic model) as a sketch.Operator: every product
// is one pass accumulating Ê2·Ω and m̂ per document (MATH §3.4), never d×d.
type pairOperator struct {
	src     stream.DocSource
	d       int
	coef    float64
	workers int
	track   *tracker
	// From the last pass:
	counts implicit.Counts
	m1     []float64
}

// Dim is the vocabulary size.
func (p *pairOperator) Dim() int { return p.d }

// MulBlock sets dst = M2·omega in one pass and keeps the pass's counts and M̂1.
func (p *pairOperator) MulBlock(ctx context.Context, dst, omega *mat.Dense) error {
	_, cols := omega.Dims()
	pass := p.track.begin()
	accs := make([]*implicit.PairAcc, p.workers)
	for w := range accs {
		accs[w] = implicit.NewPairAcc(p.d, cols)
	}
	// Worker 0 sums straight into dst (when it is contiguous), which Mean
	// then scales in place: one d×cols matrix fewer per pass.
	if raw := dst.RawMatrix(); raw.Stride == cols {
		dst.Zero()
		accs[0].E2Omega = raw.Data[:p.d*cols]
	}
	err := stream.Each(ctx, p.src.Docs, p.workers, func(w int, b *stream.Docs) error {
		accs[w].Add(b, omega)
		p.track.report(pass, "second-moment", b.Len(), false)
		return nil
	})
	if err != nil {
		return err
	}
	p.track.report(pass, "second-moment", 0, true)
	for _, a := range accs[1:] {
		if err := accs[0].Merge(a); err != nil {
			return err
		}
	}
	m1, err := accs[0].Mean(dst)
	if err != nil {
		return err
	}
	p.counts, p.m1 = accs[0].Counts, m1
	if p.coef != 0 {
		// dst −= c·m̂ (m̂ᵀΩ)
		mo := make([]float64, cols)
		for j := range cols {
			mo[j] = -p.coef * floats.Dot(m1, mat.Col(nil, j, omega))
		}
		raw := dst.RawMatrix()
		for i, mi := range m1 {
			if mi != 0 {
				floats.AddScaled(raw.Data[i*raw.Stride:i*raw.Stride+cols], mi, mo)
			}
		}
	}
	return nil
}

// thirdPass accumulates the whitened pair and triple statistics for w.
func thirdPass(ctx context.Context, src stream.DocSource, w *mat.Dense, workers int, keepRows bool, track *tracker) (*implicit.TripleAcc, error) {
	d, k := w.Dims()
	pass := track.begin()
	accs := make([]*implicit.TripleAcc, workers)
	for i := range accs {
		accs[i] = implicit.NewTripleAcc(d, k)
		accs[i].KeepRows = keepRows
	}
	err := stream.Each(ctx, src.Docs, workers, func(i int, b *stream.Docs) error {
		accs[i].Add(b, w)
		track.report(pass, "third-moment", b.Len(), false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	track.report(pass, "third-moment", 0, true)
	for _, a := range accs[1:] {
		if err := accs[0].Merge(a); err != nil {
			return nil, err
		}
	}
	return accs[0], nil
}
