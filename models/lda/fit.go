package lda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
)

// ErrTooManyTopics reports that the data support fewer topics than asked for:
// the corrected second moment has fewer than k positive eigenvalues, or the
// whitened third moment fewer than k positive eigenvalues.
var ErrTooManyTopics = errors.New("k is larger than the data support")

// Fit learns an LDA (or, with cfg.Single, a single-topic) model from src:
//
//  1. products M2·Ω with the corrected second moment (one pass each: the
//     range finder and the Rayleigh–Ritz step, or one exact product for a
//     small vocabulary) give its top-k eigenpairs (Q, D) and the whitening
//     W = Q D^{-1/2} (MATH §4.1);
//  2. one pass accumulates the whitened third moment, corrected for LDA
//     (MATH §3.5), as a packed k×k×k tensor, and re-measures WᵀM̂2W, with
//     which the tensor is re-whitened exactly (a k×k change of basis);
//  3. the robust tensor power method finds its eigenpairs (λᵢ, vᵢ), and
//     μᵢ = (α₀+2)/2·λᵢ·QD^{1/2}vᵢ, αᵢ = 4α₀(α₀+1)/((α₀+2)²λᵢ²) (MATH §4.4;
//     μᵢ = λᵢQD^{1/2}vᵢ, wᵢ = λᵢ⁻² for the single-topic model), each topic
//     projected onto the simplex and the topics ordered by weight.
//
// The same source, cfg.Seed and cfg.Workers give an identical model.
func Fit(ctx context.Context, src stream.DocSource, cfg Config) (*models.Model, error) {
	start := time.Now()
	info := src.Info()
	d := info.Terms
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return nil, err
	}
	k := cfg.K
	a0 := cfg.Alpha0
	track := &tracker{hook: cfg.Progress, start: start}

	w, eig, err := whiten(ctx, src, cfg, track)
	if err != nil {
		return nil, err
	}

	// Whitened third moment.
	acc, err := thirdPass(ctx, src, w, cfg.Workers, cfg.Implicit, track)
	if err != nil {
		return nil, err
	}
	mom, err := acc.Moments(w, cfg.Workers)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	var corr implicit.Correction
	if !cfg.Single {
		corr = implicit.Correction{
			A: -a0 / (a0 + 2),
			B: 2 * a0 * a0 / ((a0 + 2) * (a0 + 1)),
			V: mom.M1,
			M: mom.E2,
		}
	}
	p, b, gvals, err := rewhiten(unwhiten(w, eig.Values), whitenedM2(mom, a0, cfg.Single))
	if err != nil {
		return nil, err
	}
	var t solver.Tensor
	if cfg.Implicit {
		op, err := acc.Operator(w)
		if err != nil {
			return nil, fmt.Errorf("lda: %w", err)
		}
		var base solver.Tensor = op
		if !cfg.Single {
			base = &implicit.Corrected{T: op, C: corr}
		}
		t = &implicit.Transformed{T: base, P: p}
	} else {
		if !cfg.Single {
			corr.AddTo(mom.E3)
		}
		t = implicit.Transform(mom.E3, p)
	}

	solve, err := solver.ByName(cfg.Solver)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	res, err := solve(ctx, t, k, solver.Options{Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Refine: cfg.Refine})
	if errors.Is(err, solver.ErrNonPositive) {
		return nil, fmt.Errorf("lda: %w: the whitened third moment has fewer than k=%d positive eigenvalues; lower k: %v", ErrTooManyTopics, k, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lda: tensor decomposition: %w", err)
	}

	m := recoverTopics(res, b, a0, cfg.Single)
	m.Vocab = info.Vocab
	m.Fit.Solver.Name = cfg.Solver
	fs := m.Fit
	fs.Docs, fs.Skipped, fs.Tokens = acc.Docs, acc.Skipped, acc.Tokens
	fs.Passes = track.passes
	fs.Workers, fs.Seed = cfg.Workers, cfg.Seed
	fs.Whitening = "randomized"
	if eig.Exact {
		fs.Whitening = "exact"
	}
	fs.M2Eigenvalues = eig.Values
	fs.WhitenedM2Eigenvalues = slices.Clone(gvals)
	slices.Reverse(fs.WhitenedM2Eigenvalues)
	fs.Seconds = time.Since(start).Seconds()
	return m, nil
}
