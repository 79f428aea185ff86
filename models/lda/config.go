package lda

import (
	"fmt"
	"runtime"
	"time"
)

// Config controls a fit. Zero values select the defaults noted on each field.
type Config struct {
	// K is the number of topics (required, 1 ≤ K < vocabulary size).
	K int
	// Alpha0 is LDA's Dirichlet concentration α₀ = Σαᵢ, which the method needs
	// to know; 0 means 1. Ignored when Single.
	Alpha0 float64
	// Single fits the exchangeable single-topic model instead of LDA.
	Single bool
	// Seed drives the random sketch and the solver's restarts.
	Seed uint64
	// Workers is the number of goroutines consuming each pass (default
	// GOMAXPROCS). The result is identical for the same Workers and Seed.
	Workers int
	// Oversample is the number of extra sketch columns beyond K (default 10).
	Oversample int
	// PowerIters adds that many power passes to the randomized whitening.
	PowerIters int
	// RayleighRitz finishes the randomized whitening with the plain
	// Rayleigh–Ritz step instead of the (default, more accurate) Nyström step.
	RayleighRitz bool
	// ExactDim uses the exact dense whitening (one pass fewer) when the
	// vocabulary has at most this many words; 0 means DefaultExactDim and a
	// negative value never.
	ExactDim int
	// Implicit decomposes the implicit operator θ ↦ T(I,θ,θ) over the
	// whitened document rows kept in memory (MATH §3.3) instead of the packed
	// k×k×k tensor. Memory then grows with the number of documents (n·k
	// floats); it exists to cross-check the explicit path and for large k.
	Implicit bool
	// Solver names the decomposition (solver.Names; default "rtpm", the robust
	// tensor power method, which suits the orthogonal whitened LDA tensor;
	// "ojd" is the usual alternative). Refine adds that many CP-ALS sweeps.
	Solver string
	Refine int
	// Restarts and Iters are passed to the robust tensor power method (random
	// starts per topic and iterations per phase; 0 means the solver's default).
	Restarts, Iters int
	// Progress, when set, is called after every batch and at the end of every
	// pass, one call at a time.
	Progress func(Progress)
}

// DefaultExactDim is the largest vocabulary whitened exactly by default: one
// product with the d×d identity costs nnz·d, cheap at this size.
const DefaultExactDim = 300

// Progress reports the state of a fit.
type Progress struct {
	// Pass counts passes over the data from 1; Stage says what it computes:
	// "second-moment" (products M2·Ω for the whitening) or "third-moment".
	Pass  int
	Stage string
	// Docs is the number of documents read so far in this pass.
	Docs int64
	// Done is set on the last call of a pass.
	Done    bool
	Elapsed time.Duration
}

// withDefaults validates cfg against a vocabulary of d words.
func (cfg Config) withDefaults(d int) (Config, error) {
	if d <= 0 {
		return cfg, fmt.Errorf("lda: the source does not know its vocabulary size; give the vocabulary (or a source that reports it)")
	}
	if cfg.K < 1 {
		return cfg, fmt.Errorf("lda: k=%d: the number of topics must be at least 1", cfg.K)
	}
	if cfg.K >= d {
		return cfg, fmt.Errorf("lda: k=%d topics needs a vocabulary larger than k, but it has %d words; lower k", cfg.K, d)
	}
	if cfg.Single {
		cfg.Alpha0 = 0
	} else {
		if cfg.Alpha0 == 0 {
			cfg.Alpha0 = 1
		}
		if cfg.Alpha0 < 0 || cfg.Alpha0 != cfg.Alpha0 {
			return cfg, fmt.Errorf("lda: alpha0=%g: the Dirichlet concentration must be positive (1 is a common choice)", cfg.Alpha0)
		}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Solver == "" {
		cfg.Solver = "rtpm"
	}
	if cfg.ExactDim == 0 {
		cfg.ExactDim = DefaultExactDim
	}
	return cfg, nil
}
