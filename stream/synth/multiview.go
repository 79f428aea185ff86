package synth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"

	"github.com/streamfit/streamfit/stream"
)

// MultiViewConfig describes a three-view mixture (004 §3.3): per row a class
// h ~ w, then view t is μ_{t,h} + σ·N(0, I), the views written side by side
// (columns 0..D₁−1, then D₂, then D₃).
type MultiViewConfig struct {
	Rows int64
	// Dims are the widths of the three views (each ≥ K).
	Dims [3]int
	K    int
	// Sigma2 is the noise variance (default 1).
	Sigma2 float64
	// Sep is the norm of every mean vector (default 3).
	Sep                float64
	Seed               uint64
	BatchRows, Workers int
}

// MultiViewTruth is the three-view mixture generated rows are drawn from.
type MultiViewTruth struct {
	K, D int
	// Weights are the mixing weights; Views the column indices of the three
	// views, Means[v] the K means of view v.
	Weights []float64
	Views   [][]int
	Means   [][][]float64
}

// MultiView is a generated three-view table: a stream.DenseSource.
type MultiView struct {
	// Truth is the mixture the rows are drawn from.
	Truth MultiViewTruth
	// Params records how the rows were generated.
	Params map[string]any
	gen    denseGen
	comp   alias
}

// NewMultiView draws the weights (U(0.5,1.5) normalised) and Gaussian means of
// norm Sep per view, and returns the table source.
func NewMultiView(cfg MultiViewConfig) (*MultiView, error) {
	if cfg.Sigma2 == 0 {
		cfg.Sigma2 = 1
	}
	if cfg.Sep == 0 {
		cfg.Sep = 3
	}
	switch {
	case cfg.Rows < 0:
		return nil, errors.New("synth: negative number of rows")
	case cfg.K < 1:
		return nil, fmt.Errorf("synth: k=%d, need at least 1", cfg.K)
	case cfg.Sigma2 < 0 || cfg.Sep < 0:
		return nil, fmt.Errorf("synth: sigma2=%g and sep=%g must be positive", cfg.Sigma2, cfg.Sep)
	}
	for t, d := range cfg.Dims {
		if d < cfg.K {
			return nil, fmt.Errorf("synth: view %d has %d columns, need at least k=%d", t+1, d, cfg.K)
		}
	}
	r := newRand(cfg.Seed, 0)
	d := cfg.Dims[0] + cfg.Dims[1] + cfg.Dims[2]
	t := MultiViewTruth{K: cfg.K, D: d, Weights: weights(r, cfg.K), Views: make([][]int, 3), Means: make([][][]float64, 3)}
	off := 0
	for v, dv := range cfg.Dims {
		for j := range dv {
			t.Views[v] = append(t.Views[v], off+j)
		}
		off += dv
		t.Means[v] = gaussianColumns(r, cfg.K, dv, cfg.Sep)
	}
	params := map[string]any{"rows": cfg.Rows, "sigma2": cfg.Sigma2, "sep": cfg.Sep, "seed": cfg.Seed}
	g := &MultiView{Truth: t, Params: params}
	g.comp.build(t.Weights)
	sd := math.Sqrt(cfg.Sigma2)
	g.gen = denseGen{layout: "multiview", items: cfg.Rows, rowsPer: 1, cols: d, seed: cfg.Seed}
	g.gen.setup(cfg.BatchRows, cfg.Workers)
	g.gen.fill = func(r *rand.Rand, lo, hi int64, out *stream.Dense) {
		for range hi - lo {
			h := g.comp.draw(r)
			for v := range 3 {
				for _, m := range t.Means[v][h] {
					out.Data = append(out.Data, m+sd*r.NormFloat64())
				}
			}
			out.Rows++
		}
	}
	return g, nil
}

// Info describes the table.
func (g *MultiView) Info() stream.Info { return g.gen.info() }

// Rows generates one pass over the table.
func (g *MultiView) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] { return g.gen.rows(ctx) }
