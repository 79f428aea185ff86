package sketch

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Nystrom returns the top-k eigenpairs of the Nyström approximation
// Y (ΩᵀY)⁺ Yᵀ of a symmetric matrix A from one sketch Y = A·Ω (d×l, l ≥ k):
// no further product with A is needed, so it finishes a range finder that
// may read its data once. The core ΩᵀY is symmetrised and truncated to its k
// largest eigenpairs, which must be positive: its small eigenvalues are
// sampling noise that the pseudo-inverse would amplify, and dropping the
// negative ones keeps the approximation positive semi-definite, as a moment
// matrix should be. Eigenvectors are normalised so that their entry of
// largest magnitude is positive.
func Nystrom(y, omega *mat.Dense, k int) (*Result, error) {
	d, l := y.Dims()
	if od, ol := omega.Dims(); od != d || ol != l {
		panic(fmt.Sprintf("sketch: Nystrom: Y is %d×%d but Ω is %d×%d", d, l, od, ol))
	}
	if k < 1 || k > l {
		return nil, fmt.Errorf("sketch: Nystrom: need 1 ≤ k ≤ %d sketch columns, got k=%d", l, k)
	}
	var c mat.Dense
	c.Mul(omega.T(), y)
	var es mat.EigenSym
	if !es.Factorize(symmetrize(&c), true) {
		return nil, errors.New("sketch: eigendecomposition of ΩᵀY did not converge")
	}
	vals := es.Values(nil) // increasing
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := slices.Max(vals)
	if !(top > 0) || !(vals[l-k] > top*1e-12) {
		pos := 0
		for _, v := range vals {
			if v > top*1e-12 {
				pos++
			}
		}
		return nil, fmt.Errorf("%w: ΩᵀY has %d positive eigenvalues, need k=%d", ErrRank, pos, k)
	}
	// F = Y V₊ Λ₊^{-1/2}, so that Y (ΩᵀY)⁺ Yᵀ = F Fᵀ: the left singular
	// vectors and squared singular values of F are the eigenpairs sought.
	vp := mat.NewDense(l, k, nil)
	for j := range k {
		src := l - 1 - j
		s := 1 / math.Sqrt(vals[src])
		for r := range l {
			vp.Set(r, j, vecs.At(r, src)*s)
		}
	}
	var f mat.Dense
	f.Mul(y, vp)
	var svd mat.SVD
	if !svd.Factorize(&f, mat.SVDThin) {
		return nil, errors.New("sketch: SVD of the Nyström factor did not converge")
	}
	sv := svd.Values(nil)
	u := new(mat.Dense)
	svd.UTo(u)
	res := &Result{Values: make([]float64, k), Vectors: u, Products: 1}
	for j := range k {
		res.Values[j] = sv[j] * sv[j]
		col := u.ColView(j).(*mat.VecDense)
		col.ScaleVec(signOfLargest(col), col)
	}
	return res, nil
}

// RangeBasis returns the top-k left singular vectors of a sketch Y = A·Ω
// (d×l, l ≥ k), an orthonormal basis of the dominant part of A's range, and
// all min(d, l) singular values of Y, largest first (the first k match the
// vectors; how slowly the rest decay tells how much noise the sketch's
// range holds). For a test matrix whose
// columns have unit variance per row (Gaussian, or SparseSign) the singular
// values are of the order of A's top eigenvalues, so they serve to scale the
// basis; they are not eigenvalue estimates. Unlike the Nyström step it needs
// no positive definiteness of ΩᵀY, which sampling noise in a large moment
// matrix destroys.
//
// The factors come from the eigendecomposition of the small l×l Gram matrix
// YᵀY = V Σ² Vᵀ as U = Y V Σ⁻¹: one d×k matrix besides Y, where a thin SVD
// of Y would hold several d×l ones. Squaring costs precision only in
// directions of singular value below 1e-6 of the largest, which are refused
// (ErrRank: the sketch has rank below k). Vectors are normalised so that
// their entry of largest magnitude is positive.
func RangeBasis(y *mat.Dense, k int) (q *mat.Dense, s []float64, err error) {
	q, _, s, err = RangeBasisCols(y, k, k)
	return q, s, err
}

// RangeBasisCols is RangeBasis that also returns, in rest, the left singular
// vectors k+1, …, cols (at most min(d, l); nil for cols = k): the first k
// (q) span the dominant part of the range and must be well determined
// (ErrRank otherwise); the rest complete the sketch's range, down to
// singular values of 1e-6 of the largest (fewer columns when the sketch has
// lower rank). The two are separate matrices, so a caller keeps each
// without a d×cols copy.
func RangeBasisCols(y *mat.Dense, k, cols int) (q, rest *mat.Dense, s []float64, err error) {
	r, err := NewRange(y, k, cols)
	if err != nil {
		return nil, nil, nil, err
	}
	q, rest = r.Bases()
	return q, rest, r.Values, nil
}

// Range is the factorisation of a sketch Y = A·Ω (d×l) that RangeBasisCols
// forms its bases from: the eigendecomposition of the l×l Gram matrix
// YᵀY. It costs d·l²/2 multiply-adds; the bases, d·l·cols more, are formed
// only by Bases, so a caller that needs the singular values but may not
// need the vectors (they turn out to be replaced by Ritz vectors) pays for
// them only when used.
type Range struct {
	// Values are all min(d, l) singular values of Y, largest first.
	Values []float64
	y      *mat.Dense
	vecs   *mat.Dense // l×cols: V Σ⁻¹ for the kept columns
	k      int
}

// NewRange factorises the sketch y for RangeBasisCols(y, k, cols), with
// its checks and errors (ErrRank when the first k directions are not well
// determined).
func NewRange(y *mat.Dense, k, cols int) (*Range, error) {
	d, l := y.Dims()
	if k < 1 || k > min(d, l) || cols < k {
		return nil, fmt.Errorf("sketch: RangeBasis: need 1 ≤ k ≤ %d and cols ≥ k, got k=%d, cols=%d", min(d, l), k, cols)
	}
	var g mat.SymDense
	g.SymOuterK(1, y.T())
	all, vecs, err := topSym(&g, min(d, l))
	if err != nil {
		return nil, err
	}
	vals := all[:k]
	if !(vals[0] > 0) || !(vals[k-1] > vals[0]*1e-12) {
		return nil, fmt.Errorf("%w: singular value %d of the sketch is %.3g of the largest", ErrRank, k, math.Sqrt(max(0, vals[k-1]/vals[0])))
	}
	cols = min(cols, len(all))
	for cols > k && !(all[cols-1] > all[0]*1e-12) {
		cols--
	}
	vecs = vecs.Slice(0, l, 0, cols).(*mat.Dense)
	s := make([]float64, len(all))
	for j, v := range all {
		s[j] = math.Sqrt(max(0, v))
	}
	for j := range cols {
		col := vecs.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/s[j], col)
	}
	return &Range{Values: s, y: y, vecs: vecs, k: k}, nil
}

// Bases returns the top-k left singular vectors of the sketch (q) and the
// next ones up to the cols of NewRange (rest; nil when none), each with
// its entry of largest magnitude positive, as RangeBasisCols does.
func (r *Range) Bases() (q, rest *mat.Dense) {
	d, l := r.y.Dims()
	_, cols := r.vecs.Dims()
	q = mat.NewDense(d, r.k, nil)
	q.Mul(r.y, r.vecs.Slice(0, l, 0, r.k))
	if cols > r.k {
		rest = mat.NewDense(d, cols-r.k, nil)
		rest.Mul(r.y, r.vecs.Slice(0, l, r.k, cols))
	}
	for _, m := range []*mat.Dense{q, rest} {
		if m == nil {
			continue
		}
		_, c := m.Dims()
		for j := range c {
			col := m.ColView(j).(*mat.VecDense)
			col.ScaleVec(signOfLargest(col), col)
		}
	}
	return q, rest
}
