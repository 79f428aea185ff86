package lda

import (
	"context"
	"errors"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// ErrTooManyTopics reports that the data support fewer topics than asked for:
// the corrected second moment has fewer than k positive eigenvalues, or the
// whitened third moment fewer than k positive eigenvalues.
var ErrTooManyTopics = errors.New("k is larger than the data support")

// Fit learns an LDA (or, with cfg.Single, a single-topic) model from src in
// two passes (plus cfg.PowerIters):
//
//  1. pass 1 accumulates the document counts, M̂1 and Ê2·Ω for a seeded
//     sparse sign test matrix Ω of k+oversample columns (the identity for a
//     vocabulary of at most ExactDim words), never M2 itself; the top-k left
//     singular vectors Q of the sketch M2·Ω span the topics (the range
//     finder; exact eigenvectors for a small vocabulary), and W = Q D^{-1/2}
//     whitens M2 approximately (MATH §4.1);
//  2. pass 2 accumulates the whitened third moment, corrected for LDA (MATH
//     §3.5), as a packed k×k×k tensor, together with Ê2·W; WᵀM̂2W from the
//     same pass re-whitens the tensor exactly (W → W·P, P = (WᵀM̂2W)^{-1/2},
//     a k×k change of basis), so W need only span the topics well;
//  3. the robust tensor power method finds the eigenpairs (λᵢ, vᵢ), and
//     μᵢ = (α₀+2)/2·λᵢ·M̂2WP·vᵢ, αᵢ = 4α₀(α₀+1)/((α₀+2)²λᵢ²) (MATH §4.4,
//     with (Wᵀ)⁺ replaced by M̂2·W, which equals it when W spans the top-k
//     eigenspace exactly and otherwise maps back through the measured second
//     moment instead of projecting the topics onto span(W): M2·W·vᵢ = √wᵢ·μᵢ
//     holds for any W with WᵀM2W = I); each topic is projected onto the
//     simplex and the topics are ordered by weight.
//
// Fit is the same computation as FitStats(Phase2Stats(Phase1Stats(src)))
// on one shard, and gives the identical model. The same source and cfg.Seed
// give an identical model whatever cfg.Workers.
func Fit(ctx context.Context, src stream.DocSource, cfg Config) (*models.Model, error) {
	start := time.Now()
	info := src.Info()
	d := info.Terms
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return nil, err
	}
	track := newTracker(cfg)
	omega := sketchMatrix(d, cfg)
	p1, err := pairPass(ctx, src, omega, cfg, track)
	if err != nil {
		return nil, err
	}
	b, err := whitening(ctx, p1, omega, cfg, src, track, true)
	if err != nil {
		return nil, err
	}
	p2, err := triplePass(ctx, src, b.w, cfg, track)
	if err != nil {
		return nil, err
	}
	m, err := solve(ctx, p2, b, cfg)
	if err != nil {
		return nil, err
	}
	m.Vocab = info.Vocab
	m.Fit.Passes = track.passes
	m.Fit.Seconds = time.Since(start).Seconds()
	return m, nil
}
