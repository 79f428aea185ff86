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

// sketchName names the test matrix of the first pass in statistics headers.
const sketchName = "sparse-sign-8"

// sketchMatrix is the block the first pass multiplies the second moment by:
// the identity for a vocabulary whitened exactly, else a sparse sign test
// matrix of K+Oversample columns drawn from Seed (sketch.SparseSign: as good
// a range finder as a Gaussian one here, at a fraction of the cost per
// non-zero).
func sketchMatrix(d int, cfg Config) mat.Matrix {
	if cfg.exact(d) {
		id := mat.NewDense(d, d, nil)
		for i := range d {
			id.Set(i, i, 1)
		}
		return id
	}
	return sketch.SparseSign(d, cfg.sketchCols(d), sketchZeta, cfg.Seed)
}

// basis is an approximate whitening W = Q D^{-1/2} (d×k): Q spans the
// estimated top-k eigenspace of M2 and D scales it so that WᵀM2W ≈ I. The
// second pass measures WᵀM̂2W and re-whitens exactly, so only span(Q)
// matters for the result; D keeps the numbers of that pass well scaled.
type basis struct {
	w      *mat.Dense
	values []float64 // D, largest first
	exact  bool
	passes int // passes over the data it took
	// tail is σ_last/σ_k for the singular values of the last sketch (0 for
	// the exact whitening): near 1 when the extra columns found no decay,
	// i.e. the sketch's range is mostly noise beyond the topics' and may
	// hold them poorly.
	tail float64
}

// autoPowerTail is the pass policy of the default fit (PowerIters 0, data at
// hand): when the first sketch's σ_last/σ_k exceeds it, the extra columns
// found no decay past the k-th direction, its range is mostly noise there
// and may hold some topics poorly, so whitening adds one power pass (three
// passes in all). Measured: 0.07–0.15 on the test corpora and 0.75 on
// corpus M (two passes suffice: a power pass moves the mean ℓ1 by 0.002);
// 0.98 at vocabulary 100,000 and k=100 on 1M documents, where the power pass
// takes the fit from 75 to 100 topics found (mean ℓ1 0.39 → 0.16).
// The statistics route takes that pass as a phase of its own (PowerStats;
// Phase2Stats refuses phase-1 statistics whose sketch does not decay); a
// sketch without extra columns keeps two passes (its tail is 1 by
// definition).
const autoPowerTail = 0.95

// whitening finds the basis from the first pass's sums p1 against the
// sketchMatrix omega. For a small vocabulary p1 holds M2 itself, and (Q, D)
// are its top-k eigenpairs (exact). Otherwise Q is the range finder's basis:
// the top-k left singular vectors of Y = M2·Ω, after cfg.PowerIters further
// passes over src, each replacing Y by M2·orth(Y) (MATH §4.1), and D are the
// singular values of Y. With PowerIters 0 and src given, one such pass is
// added when the first sketch barely decays past k (autoPowerTail). (A
// Nyström estimate of the eigenvalues needs ΩᵀY positive definite on k
// directions, which the sampling noise of a large vocabulary breaks: at
// d=100,000, k=100 it had 92 positive eigenvalues.)
// With consume, p1's sums are overwritten (Fit has no further use for them)
// to save a d×(k+oversample) matrix.
func whitening(ctx context.Context, p1 *implicit.PairAcc, omega mat.Matrix, cfg Config, src stream.DocSource, track *tracker, consume bool) (*basis, error) {
	d, _ := omega.Dims()
	coef := cfg.m2Coef()
	y, err := m2Times(p1, coef, omega, consume)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	b := &basis{exact: cfg.exact(d), passes: 1}
	if b.exact {
		eig, err := sketch.Exact(y, cfg.K)
		if err != nil {
			return nil, fmt.Errorf("lda: whitening: %w", err)
		}
		b.w, b.values = eig.Vectors, eig.Values
		for i, v := range b.values {
			if !(v > b.values[0]*1e-12) {
				return nil, fmt.Errorf("lda: %w: eigenvalue %d of the second moment is %.3g (largest %.3g), so the data support fewer than k=%d topics; lower k (or check alpha0=%g)",
					ErrTooManyTopics, i+1, v, b.values[0], cfg.K, cfg.Alpha0)
			}
		}
	} else {
		for powers := max(cfg.PowerIters, 0); ; powers = 1 {
			for range powers {
				q, err := orthonormal(y)
				if err != nil {
					return nil, fmt.Errorf("lda: whitening: %w", err)
				}
				omega = q
				var acc *implicit.PairAcc
				if acc, err = pairPass(ctx, src, omega, cfg, track); err != nil {
					return nil, err
				}
				b.passes++
				if y, err = m2Times(acc, coef, omega, true); err != nil {
					return nil, fmt.Errorf("lda: %w", err)
				}
			}
			var sv []float64
			b.w, sv, err = sketch.RangeBasis(y, cfg.K)
			switch {
			case errors.Is(err, sketch.ErrRank):
				return nil, fmt.Errorf("lda: %w: the second moment has rank below k=%d; lower k: %v", ErrTooManyTopics, cfg.K, err)
			case err != nil:
				return nil, fmt.Errorf("lda: whitening: %w", err)
			}
			b.values, b.tail = sv[:cfg.K], sv[len(sv)-1]/sv[cfg.K-1]
			if cfg.PowerIters != 0 || src == nil || !undecayed(b.passes-1, len(sv), cfg.K, b.tail) {
				break
			}
		}
	}
	for j, v := range b.values {
		col := b.w.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/math.Sqrt(v), col)
	}
	return b, nil
}

// orthonormal returns an orthonormal basis of the columns of y (the left
// singular vectors of a thin SVD).
func orthonormal(y *mat.Dense) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDThin) {
		return nil, errors.New("SVD of the sketch did not converge")
	}
	u := new(mat.Dense)
	svd.UTo(u)
	return u, nil
}

// rewhiten makes the whitening exact within the span of W: g = WᵀM̂2W as
// measured by the third-moment pass (near I, but not exactly when W came from
// a sketch). W → W·P with P = g^{-1/2} turns the tensor T into T(P,P,P). It
// returns P and the eigenvalues of g, increasing.
func rewhiten(g *mat.SymDense) (p *mat.Dense, gvals []float64, err error) {
	var ges mat.EigenSym
	if !ges.Factorize(g, true) {
		return nil, nil, errors.New("lda: eigendecomposition of the whitened second moment did not converge")
	}
	gvals = ges.Values(nil) // ascending
	k := len(gvals)
	bad := 0
	for _, v := range gvals {
		if !(v > gvals[k-1]*1e-10) {
			bad++
		}
	}
	if bad > 0 {
		return nil, nil, fmt.Errorf("lda: %w: %d of the k=%d eigenvalues of the whitened second moment are not positive (the smallest is %.3g), so the data support at most %d topics; lower k, or give more or longer documents",
			ErrTooManyTopics, bad, k, gvals[0], k-bad)
	}
	var gvec mat.Dense
	ges.VectorsTo(&gvec)
	return powSym(&gvec, gvals, -0.5), gvals, nil
}

// powSym returns U diag(valsᵖ) Uᵀ.
func powSym(u *mat.Dense, vals []float64, p float64) *mat.Dense {
	k := len(vals)
	var s mat.Dense
	s.CloneFrom(u)
	for j, v := range vals {
		col := s.ColView(j).(*mat.VecDense)
		col.ScaleVec(math.Pow(v, p), col)
	}
	out := mat.NewDense(k, k, nil)
	out.Mul(&s, u.T())
	return out
}
