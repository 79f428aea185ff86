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

// GMMConfig describes samples from a spherical Gaussian mixture
// x = μ_h + σ_h·N(0, I) (004 §3.2.1–3.2.2).
type GMMConfig struct {
	Rows int64 // number of samples
	D    int   // dimension d
	K    int   // number of components k
	// Sigma2 is the (common, or average) noise variance σ² (default 1).
	Sigma2 float64
	// Differing draws σᵢ² = Sigma2·U(0.5, 1.5) per component instead of a common σ².
	Differing bool
	// Sep is the norm of every mean vector (default 4·√Sigma2, well separated).
	Sep float64
	// Seed makes the table reproducible.
	Seed uint64
	// BatchRows is the number of rows per batch (default stream.DefaultBatchRows).
	BatchRows int
	// Workers is the number of generating goroutines (default GOMAXPROCS); the
	// rows do not depend on it.
	Workers int
}

// GMMTruth is the mixture generated rows are drawn from.
type GMMTruth struct {
	K, D int
	// Weights are the mixing weights, Means the K mean vectors of length D,
	// Variances the σᵢ².
	Weights   []float64
	Means     [][]float64
	Variances []float64
}

// GMM is a generated spherical-GMM table: a stream.DenseSource whose every pass
// yields the same rows, drawn from Truth.
type GMM struct {
	// Truth is the mixture the rows are drawn from.
	Truth GMMTruth
	// Params records how the rows were generated.
	Params map[string]any
	gen    denseGen
	comp   alias
}

// NewGMM draws the mixture (weights U(0.5,1.5) normalised, Gaussian mean
// directions of norm Sep) and returns the table source.
func NewGMM(cfg GMMConfig) (*GMM, error) {
	if cfg.Sigma2 == 0 {
		cfg.Sigma2 = 1
	}
	if cfg.Sep == 0 {
		cfg.Sep = 4 * math.Sqrt(cfg.Sigma2)
	}
	switch {
	case cfg.Rows < 0:
		return nil, errors.New("synth: negative number of rows")
	case cfg.K < 1 || cfg.D < 1:
		return nil, fmt.Errorf("synth: need k ≥ 1 and d ≥ 1 (k=%d, d=%d)", cfg.K, cfg.D)
	case cfg.Sigma2 < 0 || cfg.Sep < 0:
		return nil, fmt.Errorf("synth: sigma2=%g and sep=%g must be positive", cfg.Sigma2, cfg.Sep)
	}
	r := newRand(cfg.Seed, 0)
	t := GMMTruth{K: cfg.K, D: cfg.D, Weights: weights(r, cfg.K),
		Means: gaussianColumns(r, cfg.K, cfg.D, cfg.Sep), Variances: make([]float64, cfg.K)}
	for i := range t.Variances {
		t.Variances[i] = cfg.Sigma2
		if cfg.Differing {
			t.Variances[i] *= 0.5 + r.Float64()
		}
	}
	params := map[string]any{"rows": cfg.Rows, "sigma2": cfg.Sigma2, "differing": cfg.Differing, "sep": cfg.Sep, "seed": cfg.Seed}
	g := &GMM{Truth: t, Params: params}
	g.comp.build(t.Weights)
	sd := make([]float64, cfg.K)
	for i, v := range t.Variances {
		sd[i] = math.Sqrt(v)
	}
	g.gen = denseGen{layout: "gmm", items: cfg.Rows, rowsPer: 1, cols: cfg.D, seed: cfg.Seed}
	g.gen.setup(cfg.BatchRows, cfg.Workers)
	g.gen.fill = func(r *rand.Rand, lo, hi int64, out *stream.Dense) {
		for range hi - lo {
			h := g.comp.draw(r)
			mu := t.Means[h]
			for _, m := range mu {
				out.Data = append(out.Data, m+sd[h]*r.NormFloat64())
			}
			out.Rows++
		}
	}
	return g, nil
}

// Info describes the table.
func (g *GMM) Info() stream.Info { return g.gen.info() }

// Rows generates one pass over the table.
func (g *GMM) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] { return g.gen.rows(ctx) }
