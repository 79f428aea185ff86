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

// ICAConfig describes samples x = A h + σ·N(0, I) with independent,
// zero-mean, unit-variance sources h (004 §3.2.3). Even-numbered sources are
// uniform on [−√3, √3] (excess kurtosis −1.2), odd-numbered ones Laplace
// (excess kurtosis +3), so the kurtoses have mixed signs.
type ICAConfig struct {
	Rows int64 // number of samples
	D    int   // observed dimension d
	K    int   // number of sources k ≤ d
	// Sigma is the standard deviation of the Gaussian noise (default 0).
	Sigma float64
	// Seed makes the table reproducible.
	Seed uint64
	// BatchRows and Workers tune generation; the rows do not depend on them.
	BatchRows, Workers int
}

// ICATruth is the mixing generated rows are drawn from.
type ICATruth struct {
	K, D int
	// Mixing holds the K columns of the mixing matrix (length D), Kurtosis
	// the excess kurtosis of each source.
	Mixing   [][]float64
	Kurtosis []float64
}

// ICA is a generated ICA table: a stream.DenseSource drawn from Truth.
type ICA struct {
	// Truth is the mixing the rows are drawn from.
	Truth ICATruth
	// Params records how the rows were generated.
	Params map[string]any
	gen    denseGen
}

// NewICA draws a Gaussian mixing matrix with unit-norm columns and returns the
// table source.
func NewICA(cfg ICAConfig) (*ICA, error) {
	switch {
	case cfg.Rows < 0:
		return nil, errors.New("synth: negative number of rows")
	case cfg.K < 1 || cfg.D < cfg.K:
		return nil, fmt.Errorf("synth: ica needs 1 ≤ k ≤ d (k=%d, d=%d)", cfg.K, cfg.D)
	case cfg.Sigma < 0:
		return nil, fmt.Errorf("synth: sigma=%g is negative", cfg.Sigma)
	}
	r := newRand(cfg.Seed, 0)
	t := ICATruth{K: cfg.K, D: cfg.D, Mixing: gaussianColumns(r, cfg.K, cfg.D, 1), Kurtosis: make([]float64, cfg.K)}
	for i := range t.Kurtosis {
		t.Kurtosis[i] = 3
		if i%2 == 0 {
			t.Kurtosis[i] = -1.2
		}
	}
	params := map[string]any{"rows": cfg.Rows, "sigma": cfg.Sigma, "seed": cfg.Seed}
	g := &ICA{Truth: t, Params: params}
	g.gen = denseGen{layout: "ica", items: cfg.Rows, rowsPer: 1, cols: cfg.D, seed: cfg.Seed}
	g.gen.setup(cfg.BatchRows, cfg.Workers)
	s3 := math.Sqrt(3)
	k, d := cfg.K, cfg.D
	g.gen.fill = func(r *rand.Rand, lo, hi int64, out *stream.Dense) {
		h := make([]float64, k)
		for range hi - lo {
			for i := range h {
				if i%2 == 0 {
					h[i] = s3 * (2*r.Float64() - 1)
				} else {
					h[i] = r.ExpFloat64() / math.Sqrt2 // Laplace with unit variance
					if r.IntN(2) == 0 {
						h[i] = -h[i]
					}
				}
			}
			for j := range d {
				v := cfg.Sigma * r.NormFloat64()
				for i, hi := range h {
					v += t.Mixing[i][j] * hi
				}
				out.Data = append(out.Data, v)
			}
			out.Rows++
		}
	}
	return g, nil
}

// Info describes the table.
func (g *ICA) Info() stream.Info { return g.gen.info() }

// Rows generates one pass over the table.
func (g *ICA) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] { return g.gen.rows(ctx) }
