package lda

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// whiten finds the top-k eigenpairs (Q, D) of the corrected second moment
// through streamed products and returns W = Q D^{-1/2}. (Wᵀ)⁺ = Q D^{1/2} is
// W·D, formed by unwhiten when needed, so only one d×k matrix is held during
// the third-moment pass.
func whiten(ctx context.Context, src stream.DocSource, cfg Config, track *tracker) (w *mat.Dense, eig *sketch.Result, err error) {
	k, a0, d := cfg.K, cfg.Alpha0, src.Info().Terms
	op := &pairOperator{src: src, d: d, workers: cfg.Workers, track: track}
	if !cfg.Single {
		op.coef = a0 / (a0 + 1)
	}
	eig, err = sketch.TopEigen(ctx, op, k, sketch.Options{
		Oversample: cfg.Oversample, PowerIters: cfg.PowerIters, Seed: cfg.Seed, ExactDim: cfg.ExactDim,
		Nystrom: !cfg.RayleighRitz,
	})
	switch {
	case errors.Is(err, implicit.ErrNoDocs):
		return nil, nil, fmt.Errorf("lda: %w", err)
	case errors.Is(err, sketch.ErrRank):
		return nil, nil, fmt.Errorf("lda: %w: the second moment has rank below k=%d; lower k: %v", ErrTooManyTopics, k, err)
	case err != nil:
		return nil, nil, fmt.Errorf("lda: whitening: %w", err)
	}
	for i, v := range eig.Values {
		if !(v > eig.Values[0]*1e-12) {
			return nil, nil, fmt.Errorf("lda: %w: eigenvalue %d of the second moment is %.3g (largest %.3g), so the data support fewer than k=%d topics; lower k (or check alpha0=%g)",
				ErrTooManyTopics, i+1, v, eig.Values[0], k, a0)
		}
	}
	w = eig.Vectors // scaled in place: Q is not needed once W exists
	for j, v := range eig.Values {
		col := w.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/math.Sqrt(v), col)
	}
	eig.Vectors = nil
	return w, eig, nil
}

// unwhiten returns (Wᵀ)⁺ = Q D^{1/2} = W·D for W = Q D^{-1/2}.
func unwhiten(w *mat.Dense, d []float64) *mat.Dense {
	b := mat.DenseCopyOf(w)
	for j, v := range d {
		col := b.ColView(j).(*mat.VecDense)
		col.ScaleVec(v, col)
	}
	return b
}

// rewhiten makes the whitening exact within the span of W: g = WᵀM̂2W as
// measured by the third-moment pass (near I, but not exactly when W came from
// a sketch). W → W·P with P = g^{-1/2} turns the tensor T into T(P,P,P) and B
// into B·g^{1/2}. It returns P, the new B and the eigenvalues of g, increasing.
func rewhiten(b *mat.Dense, g *mat.SymDense) (p, b2 *mat.Dense, gvals []float64, err error) {
	var ges mat.EigenSym
	if !ges.Factorize(g, true) {
		return nil, nil, nil, errors.New("lda: eigendecomposition of the whitened second moment did not converge")
	}
	gvals = ges.Values(nil)
	for i, v := range gvals {
		if !(v > 1e-8) {
			return nil, nil, nil, fmt.Errorf("lda: %w: the whitened second moment has eigenvalue %.3g (index %d), so the data support fewer than k=%d topics; lower k",
				ErrTooManyTopics, v, i, len(gvals))
		}
	}
	var gvec mat.Dense
	ges.VectorsTo(&gvec)
	b2 = new(mat.Dense)
	b2.Mul(b, powSym(&gvec, gvals, 0.5))
	return powSym(&gvec, gvals, -0.5), b2, gvals, nil
}
