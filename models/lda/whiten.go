package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

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
	// extra completes the range of the first sketch beyond span(W): its
	// left singular vectors k+1, … (d×(l−k), orthonormal), kept by Fit for
	// a power pass over that whole range should W prove to hold a negative
	// direction of M̂2 (see negativeError); nil otherwise.
	extra *mat.Dense
	// negative counts the negative Ritz values of M̂2 on the range of the
	// last power pass that were at least half the k-th positive one in
	// magnitude (directions the singular vectors could have taken into W):
	// W then holds the Ritz vectors of the k largest positive Ritz values
	// instead. 0 when none were, or without a power pass.
	negative int
	// e2w is Ê2·W (d×k) as the power pass measured it, when W lies in the
	// span of that pass's basis (the Ritz vectors above): the third-moment
	// pass then need not sum it again (implicit.TripleAcc.NoPair). nil
	// otherwise.
	e2w *mat.Dense
	// positive is the number of positive Ritz values on that range (0
	// without a power pass; for the exact whitening, the number of positive
	// eigenvalues of M̂2).
	positive int
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
// are its top-k eigenpairs (exact; algebraically largest, so a negative
// direction of M̂2 is never taken). Otherwise Q is the range finder's basis:
// the top-k left singular vectors of Y = M2·Ω, after cfg.PowerIters further
// passes over src, each replacing Y by M2·orth(Y) (docs/MATH.md §4.1), and D are the
// singular values of Y. With PowerIters 0 and src given, one such pass is
// added when the first sketch barely decays past k (autoPowerTail). After a
// power pass (powered: omega is the orthonormal Q of one), M̂2's Ritz values
// on span(Q) are exact, and when negative ones rival the k-th positive one,
// Q is replaced by the Ritz vectors of the k largest positive Ritz values
// (basis.negative): real text has a large negative direction near M̂1 that
// singular vectors, which rank directions by |λ|, would take into W. (A
// Nyström estimate of the eigenvalues needs ΩᵀY positive definite on k
// directions, which the sampling noise of a large vocabulary breaks: at
// d=100,000, k=100 it had 92 positive eigenvalues; and the signs of a
// single-pass estimate are noise-driven on clean corpora.)
// With consume, p1's sums are overwritten (Fit has no further use for them)
// to save a d×(k+oversample) matrix; consume also keeps the rest of the
// first sketch's range in basis.extra.
func whitening(ctx context.Context, p1 *implicit.PairAcc, omega mat.Matrix, cfg Config, src stream.DocSource, track *tracker, consume, powered bool) (*basis, error) {
	y, err := m2Times(p1, cfg.m2Coef(), omega, consume)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	return whitenSketch(ctx, y, nil, omega, cfg, src, track, consume, powered)
}

// whitenSketch is whitening from the sketch y = M̂2·omega already formed
// and, after a power pass, from qaq = omegaᵀy when the caller formed it
// (nil: formed here if needed).
func whitenSketch(ctx context.Context, y, qaq *mat.Dense, omega mat.Matrix, cfg Config, src stream.DocSource, track *tracker, consume, powered bool) (*basis, error) {
	d, _ := omega.Dims()
	coef := cfg.m2Coef()
	b := &basis{exact: cfg.exact(d), passes: 1}
	if b.exact {
		eig, err := sketch.Exact(y, d)
		if err != nil {
			return nil, fmt.Errorf("lda: whitening: %w", err)
		}
		for _, v := range eig.Values {
			if v > eig.Values[0]*1e-12 {
				b.positive++
			}
		}
		if b.positive < cfg.K {
			return nil, tooFewPositive(cfg, b.positive, d, "eigenvalues of the second moment", false)
		}
		b.w, b.values = mat.DenseCopyOf(eig.Vectors.Slice(0, d, 0, cfg.K)), eig.Values[:cfg.K]
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
				qaq = nil
			}
			keep := consume && !powered && b.passes == 1
			if err := b.fromSketch(y, qaq, omega, cfg, keep, powered || b.passes > 1); err != nil {
				return nil, err
			}
			if cfg.PowerIters != 0 || src == nil || !undecayed(b.passes-1, y.RawMatrix().Cols, cfg.K, b.tail) {
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

// fromSketch sets b's (unscaled) basis, scales and tail from the sketch
// y = M̂2·omega: the top-k left singular vectors of y (and, with keep, the
// rest of its range in b.extra); with ritz (omega orthonormal), the Ritz
// vectors of the k largest positive Ritz values instead when negative Ritz
// values rival the k-th positive one. qaq is omegaᵀy when the caller has
// it (nil: formed here when ritz needs it). The singular vectors, a d×k
// product, are formed only when they are the basis.
func (b *basis) fromSketch(y, qaq *mat.Dense, omega mat.Matrix, cfg Config, keep, ritz bool) error {
	k := cfg.K
	cols := k
	if keep {
		cols = y.RawMatrix().Cols
	}
	r, err := sketch.NewRange(y, k, cols)
	switch {
	case errors.Is(err, sketch.ErrRank):
		return fmt.Errorf("lda: %w: the second moment has rank below k=%d; lower k: %v", ErrTooManyTopics, k, err)
	case err != nil:
		return fmt.Errorf("lda: whitening: %w", err)
	}
	sv := r.Values
	b.w, b.values, b.tail = nil, sv[:k], sv[len(sv)-1]/sv[k-1]
	b.extra, b.negative, b.positive = nil, 0, 0
	if ritz {
		qo, ok := omega.(*mat.Dense)
		if !ok {
			return errors.New("lda: whitening: a power pass's basis must be a dense orthonormal matrix")
		}
		if qaq == nil {
			qaq = new(mat.Dense)
			qaq.Mul(qo.T(), y)
		}
		vals, coef, err := sketch.RitzCore(qaq, min(k, len(sv)))
		if err != nil {
			return fmt.Errorf("lda: whitening: %w", err)
		}
		neg := 0
		for _, v := range vals {
			if v > 0 {
				b.positive++
			}
		}
		if b.positive < k {
			return tooFewPositive(cfg, b.positive, len(vals), "Ritz values of the second moment on the range of the power pass", true)
		}
		for _, v := range vals {
			if v < 0 && -v >= negRival*vals[k-1] {
				neg++
			}
		}
		if neg > 0 {
			b.w, b.values, b.negative = sketch.RitzVectors(qo, coef), vals[:k], neg
			return nil
		}
	}
	b.w, b.extra = r.Bases()
	return nil
}

// negRival is how large, relative to the k-th positive Ritz value, a
// negative one must be for fromSketch to take the positive Ritz vectors:
// a smaller negative direction is not among the top k singular vectors
// of M̂2·Q.
const negRival = 0.5

// tooFewPositive is the refusal of a whitening that found only pos of the
// k positive directions of M̂2 it needs among cols candidates (what; from
// a sketch's range, or all of M̂2).
func tooFewPositive(cfg Config, pos, cols int, what string, sketch bool) error {
	return &fewPositiveError{pos: pos, cols: cols, k: cfg.K, what: what, alpha0: cfg.Alpha0, sketch: sketch}
}

// fewPositiveError reports that the candidates for W (the eigenvalues of
// M̂2 for the exact whitening, the Ritz values on a power pass's range)
// held fewer than k positive ones. Fit sketches again with more columns
// while the vocabulary allows; the exact whitening's count is final.
type fewPositiveError struct {
	pos, cols, k int
	what         string
	alpha0       float64
	sketch       bool // candidates from a sketch's range, not all of M̂2
}

func (e *fewPositiveError) Error() string {
	if e.sketch {
		return fmt.Sprintf("lda: %v: only %d of the %d %s are positive, fewer than k=%d; a sketch of more columns finds more (fit does so itself): compute the statistics again with oversample %d, or lower k to %d",
			ErrTooManyTopics, e.pos, e.cols, e.what, e.k, e.moreCols()-e.k, max(e.pos, 1))
	}
	return fmt.Sprintf("lda: %v: only %d of the %d %s are positive, fewer than k=%d: the data support at most %d topics; lower k to %d (or check alpha0=%g)",
		ErrTooManyTopics, e.pos, e.cols, e.what, e.k, e.pos, max(e.pos, 1), e.alpha0)
}

// moreCols is the number of sketch columns Fit tries next: k plus twice
// the candidates that were not positive plus the oversampling it had.
func (e *fewPositiveError) moreCols() int { return e.k + 2*(e.cols-e.pos) + max(e.cols-e.k, 0) }

func (e *fewPositiveError) Unwrap() error { return ErrTooManyTopics }

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
	if bad := nonPositive(gvals); bad > 0 {
		return nil, nil, &negativeError{bad: bad, k: k, smallest: gvals[0]}
	}
	var gvec mat.Dense
	ges.VectorsTo(&gvec)
	return powSym(&gvec, gvals, -0.5), gvals, nil
}

// nonPositive counts the eigenvalues of a whitened second moment, in any
// order, that are not positive: at most 1e-10 of the largest (or NaN).
func nonPositive(vals []float64) int {
	top := slices.Max(vals)
	bad := 0
	for _, v := range vals {
		if !(v > top*1e-10) {
			bad++
		}
	}
	return bad
}

// negativeError reports a whitening W that holds directions of negative
// curvature of M̂2: bad of the k eigenvalues of WᵀM̂2W, as measured by the
// third-moment pass, are not positive. Real text has a large negative
// direction near M̂1, which the singular vectors of a first sketch can take
// into W; Fit then takes a power pass over the sketch's whole range and
// whitens with its positive Ritz vectors (rangePass), and the statistics
// route needs the power statistics (ErrPowerPass).
type negativeError struct {
	bad, k   int
	smallest float64
	advice   string
}

func (e *negativeError) Error() string {
	advice := e.advice
	if advice == "" {
		advice = "lower k, or give more or longer documents"
	}
	return fmt.Sprintf("lda: %v: %d of the k=%d eigenvalues of the whitened second moment are not positive (the smallest is %.3g); %s",
		ErrTooManyTopics, e.bad, e.k, e.smallest, advice)
}

func (e *negativeError) Unwrap() error { return ErrTooManyTopics }

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
