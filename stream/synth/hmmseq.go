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

// HMMSeqConfig describes sequences of a hidden Markov model (004 §3.3.3):
// y₁ ~ π, y_{t+1} ~ T[:, y_t], and the observation x_t is one-hot over D
// symbols drawn from O[:, y_t] (Discrete) or O[:, y_t] + σ·N(0, I). The table
// has one row per time step with the sequence number as its id.
type HMMSeqConfig struct {
	Seqs int64 // number of sequences
	Len  int   // steps per sequence (at least 3)
	K    int   // hidden states
	D    int   // observation dimension (symbols when Discrete), ≥ K
	// Discrete draws one-hot observations; otherwise Gaussian ones.
	Discrete bool
	// Sigma2 is the Gaussian noise variance (default 0.5).
	Sigma2 float64
	// Stay is β in T = βI + (1−β)Q with Dirichlet columns Q (default 0.5),
	// which keeps T invertible.
	Stay               float64
	Seed               uint64
	BatchRows, Workers int
}

// HMMTruth is the hidden Markov model generated sequences are drawn from.
type HMMTruth struct {
	K, D int
	// Pi is the initial distribution, T the column-stochastic transition
	// matrix as rows (T[i][j] = Pr(i | j)), O the K observation means (or
	// symbol distributions) of length D.
	Pi []float64
	T  [][]float64
	O  [][]float64
}

// HMMSeq is a generated sequence table: a stream.DenseSource with sequence ids.
type HMMSeq struct {
	// Truth is the model the rows are drawn from.
	Truth HMMTruth
	// Params records how the rows were generated.
	Params map[string]any
	gen    denseGen
}

// NewHMMSeq draws the chain and returns the table source.
func NewHMMSeq(cfg HMMSeqConfig) (*HMMSeq, error) {
	if cfg.Sigma2 == 0 {
		cfg.Sigma2 = 0.5
	}
	if cfg.Stay == 0 {
		cfg.Stay = 0.5
	}
	switch {
	case cfg.Seqs < 0:
		return nil, errors.New("synth: negative number of sequences")
	case cfg.Len < 3:
		return nil, fmt.Errorf("synth: sequences of length %d, need at least 3", cfg.Len)
	case cfg.K < 1 || cfg.D < cfg.K:
		return nil, fmt.Errorf("synth: hmm needs 1 ≤ k ≤ d (k=%d, d=%d)", cfg.K, cfg.D)
	case cfg.Stay < 0 || cfg.Stay >= 1 || cfg.Sigma2 < 0:
		return nil, fmt.Errorf("synth: stay=%g must be in [0,1) and sigma2=%g ≥ 0", cfg.Stay, cfg.Sigma2)
	}
	k, d := cfg.K, cfg.D
	r := newRand(cfg.Seed, 0)
	t := HMMTruth{K: k, D: d, Pi: weights(r, k), T: make([][]float64, k), O: make([][]float64, k)}
	for i := range k {
		t.T[i] = make([]float64, k)
	}
	col := make([]float64, k)
	for j := range k {
		dirichlet(r, col, []float64{1})
		for i := range k {
			t.T[i][j] = (1 - cfg.Stay) * col[i]
		}
		t.T[j][j] += cfg.Stay
	}
	if cfg.Discrete {
		for j := range k {
			t.O[j] = make([]float64, d)
			dirichlet(r, t.O[j], []float64{0.2})
		}
	} else {
		t.O = gaussianColumns(r, k, d, 3)
	}
	params := map[string]any{"seqs": cfg.Seqs, "len": cfg.Len, "discrete": cfg.Discrete, "sigma2": cfg.Sigma2, "stay": cfg.Stay, "seed": cfg.Seed}
	g := &HMMSeq{Truth: t, Params: params}
	start := &alias{}
	start.build(t.Pi)
	next := make([]alias, k)
	obs := make([]alias, k)
	for j := range k {
		for i := range k {
			col[i] = t.T[i][j]
		}
		next[j].build(col)
		if cfg.Discrete {
			obs[j].build(t.O[j])
		}
	}
	sd := math.Sqrt(cfg.Sigma2)
	g.gen = denseGen{layout: "hmm-seq", items: cfg.Seqs, rowsPer: cfg.Len, cols: d, seed: cfg.Seed, grouped: true}
	g.gen.setup(cfg.BatchRows, cfg.Workers)
	g.gen.fill = func(r *rand.Rand, lo, hi int64, out *stream.Dense) {
		for s := lo; s < hi; s++ {
			y := start.draw(r)
			for step := range cfg.Len {
				if step > 0 {
					y = next[y].draw(r)
				}
				if cfg.Discrete {
					base := len(out.Data)
					out.Data = append(out.Data, make([]float64, d)...)
					out.Data[base+int(obs[y].draw(r))] = 1
				} else {
					for _, m := range t.O[y] {
						out.Data = append(out.Data, m+sd*r.NormFloat64())
					}
				}
				out.Group = append(out.Group, s)
				out.Rows++
			}
		}
	}
	return g, nil
}

// Info describes the table.
func (g *HMMSeq) Info() stream.Info { return g.gen.info() }

// Rows generates one pass over the table.
func (g *HMMSeq) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] { return g.gen.rows(ctx) }
