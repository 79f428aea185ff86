package sketch

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// DefaultOversample is the number of extra random directions the range finder
// uses beyond k; about ten makes the captured subspace reliable without costing
// much more per pass (Halko, Martinsson and Tropp).
const DefaultOversample = 10

// Options tune TopEigen. The zero value is a randomized range finder with
// DefaultOversample extra columns, no power passes and seed 0.
type Options struct {
	// Oversample is the number of extra columns of the random test matrix;
	// 0 means DefaultOversample and a negative value means none.
	Oversample int
	// PowerIters is the number of extra products A·Q (each re-orthonormalised)
	// before Rayleigh–Ritz; they sharpen the subspace when the spectrum decays
	// slowly, at one more pass each.
	PowerIters int
	// Seed drives the Gaussian test matrix.
	Seed uint64
	// ExactDim selects the exact path when Dim() ≤ ExactDim: one product with
	// the identity and a dense symmetric eigendecomposition.
	ExactDim int
	// Nystrom replaces the final Rayleigh–Ritz step by a Nyström step for
	// operators that are positive semidefinite up to small noise (estimated
	// moment matrices): with B = QᵀAQ truncated to its top k eigenpairs
	// (V, Λ), A ≈ (AQV) Λ⁻¹ (AQV)ᵀ, whose eigenvectors span range(AQV). That
	// is one power step better than range(Q) for the same products, so the
	// answer is about as accurate as Rayleigh–Ritz after one more power pass.
	Nystrom bool
}

// Result holds the top-k eigenpairs of an operator.
type Result struct {
	// Values are the k largest eigenvalues (algebraically), in decreasing order.
	Values []float64
	// Vectors is Dim×k with orthonormal columns, column j for Values[j].
	Vectors *mat.Dense
	// Products is the number of calls to MulBlock (passes over the data).
	Products int
	// Exact reports that the dense path was used.
	Exact bool
}

// ErrRank reports that the range finder could not find k independent
// directions: the operator has rank below k (or is zero).
var ErrRank = errors.New("sketch: operator has rank below k")

// TopEigen returns the k algebraically largest eigenpairs of op. The randomized
// path costs 2+PowerIters products with blocks of k+Oversample columns: one to
// find the range, PowerIters to refine it, and one for the Rayleigh–Ritz
// matrix QᵀAQ. The exact path costs one product with the identity.
func TopEigen(ctx context.Context, op Operator, k int, opt Options) (*Result, error) {
	d := op.Dim()
	if k < 1 || k > d {
		return nil, fmt.Errorf("sketch: need 1 ≤ k ≤ dimension, got k=%d, dimension %d", k, d)
	}
	if d <= opt.ExactDim {
		return exact(ctx, op, k)
	}
	over := opt.Oversample
	switch {
	case over == 0:
		over = DefaultOversample
	case over < 0:
		over = 0
	}
	cols := min(k+over, d)
	omega := Gaussian(d, cols, opt.Seed)
	y := mat.NewDense(d, cols, nil)
	res := &Result{}
	if err := op.MulBlock(ctx, y, omega); err != nil {
		return nil, err
	}
	res.Products++
	q, err := orthonormal(y, k)
	if err != nil {
		return nil, err
	}
	for range opt.PowerIters {
		if err := op.MulBlock(ctx, y, q); err != nil {
			return nil, err
		}
		res.Products++
		if q, err = orthonormal(y, k); err != nil {
			return nil, err
		}
	}
	// y is no longer needed: reuse its memory for A·Q (same shape, d×cols).
	aq := y
	if err := op.MulBlock(ctx, aq, q); err != nil {
		return nil, err
	}
	res.Products++
	if opt.Nystrom {
		r, err := Nystrom(aq, q, k)
		if err != nil {
			return nil, err
		}
		r.Products = res.Products
		return r, nil
	}
	var b mat.Dense
	b.Mul(q.T(), aq)
	vals, vecs, err := topSym(symmetrize(&b), k)
	if err != nil {
		return nil, err
	}
	res.Values = vals
	res.Vectors = mat.NewDense(d, k, nil)
	res.Vectors.Mul(q, vecs)
	return res, nil
}

// exact multiplies op by the identity and decomposes the result densely.
func exact(ctx context.Context, op Operator, k int) (*Result, error) {
	d := op.Dim()
	id := mat.NewDense(d, d, nil)
	for i := range d {
		id.Set(i, i, 1)
	}
	a := mat.NewDense(d, d, nil)
	if err := op.MulBlock(ctx, a, id); err != nil {
		return nil, err
	}
	return Exact(a, k)
}

// Exact returns the k algebraically largest eigenpairs of the explicit
// square matrix a, symmetrised as (a+aᵀ)/2 to remove the rounding asymmetry
// of a computed product, by a dense eigendecomposition.
func Exact(a *mat.Dense, k int) (*Result, error) {
	if r, c := a.Dims(); r != c || k < 1 || k > r {
		return nil, fmt.Errorf("sketch: Exact needs a square matrix and 1 ≤ k ≤ its order, got %d×%d and k=%d", r, c, k)
	}
	vals, vecs, err := topSym(symmetrize(a), k)
	if err != nil {
		return nil, err
	}
	return &Result{Values: vals, Vectors: vecs, Products: 1, Exact: true}, nil
}

// symmetrize returns (a+aᵀ)/2, removing the rounding asymmetry of a product.
func symmetrize(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

// topSym returns the k largest eigenvalues of s in decreasing order and their
// eigenvectors as columns.
func topSym(s *mat.SymDense, k int) ([]float64, *mat.Dense, error) {
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, nil, errors.New("sketch: symmetric eigendecomposition did not converge")
	}
	n := s.SymmetricDim()
	all := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	// Stable order keeps ties deterministic.
	sort.SliceStable(idx, func(a, b int) bool { return all[idx[a]] > all[idx[b]] })
	vals := make([]float64, k)
	out := mat.NewDense(n, k, nil)
	for j := range k {
		vals[j] = all[idx[j]]
		col := vecs.ColView(idx[j])
		sign := signOfLargest(col)
		for i := range n {
			out.Set(i, j, sign*col.AtVec(i))
		}
	}
	return vals, out, nil
}

// orthonormal returns an orthonormal basis of the range of y (thin SVD, which
// also tells us when y has fewer than k independent directions).
func orthonormal(y *mat.Dense, k int) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDThin) {
		return nil, errors.New("sketch: SVD of the sketch did not converge")
	}
	sv := svd.Values(nil)
	if len(sv) < k || sv[0] == 0 || sv[k-1] <= sv[0]*1e-13 {
		return nil, ErrRank
	}
	var u mat.Dense
	svd.UTo(&u)
	return &u, nil
}

// signOfLargest is the sign that makes the largest-magnitude entry of v
// positive: fixing it makes the same subspace always give the same vectors.
func signOfLargest(v mat.Vector) float64 {
	best, sign := 0.0, 1.0
	for i := range v.Len() {
		if x := v.AtVec(i); x*x > best {
			best = x * x
			sign = 1
			if x < 0 {
				sign = -1
			}
		}
	}
	return sign
}

// Ritz returns the Rayleigh–Ritz approximation of a symmetric operator A on
// the span of the orthonormal columns of q (d×l), given aq = A·q: all l
// eigenvalues of qᵀAq (symmetrised), algebraically largest first, and the
// coefficients (l×k) of the Ritz vectors of the first k in q's basis
// (RitzVectors forms them, d×k, only when needed). Unlike the singular
// vectors of A·q, which rank directions by |λ|, they tell positive
// curvature from negative: the first k are the k largest eigenpairs of A as
// far as span(q) holds them.
func Ritz(q, aq *mat.Dense, k int) (vals []float64, coef *mat.Dense, err error) {
	d, l := q.Dims()
	if ad, al := aq.Dims(); ad != d || al != l || k < 1 || k > l {
		return nil, nil, fmt.Errorf("sketch: Ritz: need q and A·q of the same shape and 1 ≤ k ≤ %d, got %d×%d, %d×%d and k=%d", l, d, l, ad, al, k)
	}
	var b mat.Dense
	b.Mul(q.T(), aq)
	return RitzCore(&b, k)
}

// RitzCore is Ritz from the l×l matrix qᵀ(A·q) already formed (a caller
// that also needs a block of it forms the product once).
func RitzCore(qaq *mat.Dense, k int) (vals []float64, coef *mat.Dense, err error) {
	l, c := qaq.Dims()
	if c != l || k < 1 || k > l {
		return nil, nil, fmt.Errorf("sketch: RitzCore: need a square matrix and 1 ≤ k ≤ its order, got %d×%d and k=%d", l, c, k)
	}
	vals, v, err := topSym(symmetrize(qaq), l)
	if err != nil {
		return nil, nil, err
	}
	return vals, mat.DenseCopyOf(v.Slice(0, l, 0, k)), nil
}

// RitzVectors returns the Ritz vectors q·coef of Ritz (d×k), each with its
// entry of largest magnitude positive.
func RitzVectors(q, coef *mat.Dense) *mat.Dense {
	d, _ := q.Dims()
	_, k := coef.Dims()
	vecs := mat.NewDense(d, k, nil)
	vecs.Mul(q, coef)
	for j := range k {
		col := vecs.ColView(j).(*mat.VecDense)
		col.ScaleVec(signOfLargest(col), col)
	}
	return vecs
}
