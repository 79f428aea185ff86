package multiview

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ErrSpectrum reports that the symmetrised second moment has fewer than k
// positive eigenvalues: k is too large for the data or the views are degenerate.
var ErrSpectrum = errors.New("multiview: symmetrised M2 has fewer than k positive eigenvalues")

// Pass streams every triple once, in blocks: fn receives three matrices with
// the same number of rows, row i holding the three views of triple i. It may
// call fn from up to workers goroutines, each with its own worker index in
// [0, workers), and must visit the triples in the same blocks on every call so
// that sums are reproducible.
type Pass func(ctx context.Context, workers int, fn func(worker int, x1, x2, x3 blas64.General) error) error

// Options configure Decompose.
type Options struct {
	K int
	// Solver names the symmetric solver (solver.ByName; default "rtpm").
	Solver          string
	Restarts, Iters int
	Seed            uint64
	Workers         int
}

// Decomposition is the result of Decompose.
type Decomposition struct {
	N int64 // number of triples
	// Weights are wᵢ = λᵢ⁻² (not renormalised).
	Weights []float64
	// Means[t] is d_t×k, column i the mean of view t under class i.
	Means [3]*mat.Dense
	// Whitening are the k eigenvalues of M₂; Lambda the tensor eigenvalues.
	Whitening, Lambda []float64
	// Result is the solver's answer, with its convergence report.
	Result *solver.Result
}

// Decompose runs the two-pass three-view method of Thm 3.6 (see the package
// comment) on the triples of pass, whose views have dims[t] columns.
func Decompose(ctx context.Context, pass Pass, dims [3]int, opt Options) (*Decomposition, error) {
	k := opt.K
	for t, d := range dims {
		if k < 1 || k > d {
			return nil, fmt.Errorf("multiview: k=%d must be in [1, %d], the dimension of view %d; the moment method needs k ≤ d", k, d, t+1)
		}
	}
	if opt.Solver == "" {
		opt.Solver = "rtpm"
	}
	if opt.Workers < 1 {
		opt.Workers = 1
	}
	solve, err := solver.ByName(opt.Solver)
	if err != nil {
		return nil, fmt.Errorf("multiview: %w", err)
	}
	nw := opt.Workers
	e12, e32, e31, n, err := CrossMoments(ctx, pass, dims, nw)
	if err != nil {
		return nil, err
	}
	cs, err := newCrossStage(e12, e32, e31, n, k)
	if err != nil {
		return nil, err
	}
	t, n2, err := whitenedTriple(ctx, pass, cs.p1t, cs.p2t, cs.wm, nw)
	if err != nil {
		return nil, err
	}
	if n2 != n {
		return nil, fmt.Errorf("multiview: the source changed between passes (%d triples, then %d)", n, n2)
	}
	return cs.recover(ctx, solve, t, opt)
}

// crossStage is what the averaged cross moments of the first pass give the
// second pass (the maps P₁, P₂ and the whitening W of view 3) and the
// recovery.
type crossStage struct {
	e12, e32, e31 *mat.Dense
	n             int64
	wm, bm        *mat.Dense
	white         []float64
	p1t, p2t      *mat.Dense // d₁×k, d₂×k
}

// newCrossStage whitens the symmetrised second moment of view 3 from the
// averaged cross moments of n triples.
func newCrossStage(e12, e32, e31 *mat.Dense, n int64, k int) (*crossStage, error) {
	d3, _ := e32.Dims()
	pi12, err := pinvK(e12, k)
	if err != nil {
		return nil, err
	}
	pi21, err := pinvK(e12.T(), k)
	if err != nil {
		return nil, err
	}
	var a1, a2 mat.Dense
	a1.Mul(e32, pi12) // d3×d1
	a2.Mul(e31, pi21) // d3×d2
	var tmp, m2 mat.Dense
	tmp.Mul(&a1, e12)
	m2.Mul(&tmp, a2.T())
	ms := mat.NewSymDense(d3, nil)
	for i := range d3 {
		for j := i; j < d3; j++ {
			ms.SetSym(i, j, (m2.At(i, j)+m2.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(ms, true) {
		return nil, errors.New("multiview: eigendecomposition of M2 did not converge")
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	wm := mat.NewDense(d3, k, nil)
	bm := mat.NewDense(d3, k, nil)
	white := make([]float64, k)
	for j := range k {
		c := d3 - 1 - j
		white[j] = vals[c]
		if !(vals[c] > 1e-12*math.Abs(vals[d3-1])) || !(vals[c] > 0) {
			return nil, &models.ShortError{Positive: j, Err: fmt.Errorf("%w (eigenvalue %d is %.3g); try a smaller k", ErrSpectrum, j+1, vals[c])}
		}
		s := math.Sqrt(vals[c])
		for i := range d3 {
			wm.Set(i, j, vecs.At(i, c)/s)
			bm.Set(i, j, vecs.At(i, c)*s)
		}
	}
	var p1, p2 mat.Dense
	p1.Mul(wm.T(), &a1) // k×d1
	p2.Mul(wm.T(), &a2) // k×d2
	return &crossStage{e12: e12, e32: e32, e31: e31, n: n, wm: wm, bm: bm, white: white,
		p1t: mat.DenseCopyOf(p1.T()), p2t: mat.DenseCopyOf(p2.T())}, nil
}

// recover decomposes the whitened symmetric third moment t and maps the
// factors back to the weights and the views' means.
func (cs *crossStage) recover(ctx context.Context, solve solver.Func, t *solver.Sym3, opt Options) (*Decomposition, error) {
	k, n := opt.K, cs.n
	d3, _ := cs.wm.Dims()
	res, err := solve(ctx, t, k, solver.Options{Restarts: opt.Restarts, Iters: opt.Iters, Seed: opt.Seed})
	if err != nil {
		return nil, fmt.Errorf("multiview: %w (k=%d may be too large for the data)", err, k)
	}
	out := &Decomposition{N: n, Weights: make([]float64, k), Whitening: cs.white, Lambda: res.Weights, Result: res}
	m3 := mat.NewDense(d3, k, nil)
	for i, lam := range res.Weights {
		out.Weights[i] = 1 / (lam * lam)
		var mu mat.VecDense
		mu.MulVec(cs.bm, res.Factors.ColView(i))
		mu.ScaleVec(lam, &mu)
		m3.SetCol(i, mu.RawVector().Data)
	}
	out.Means[2] = m3
	// M₍ₜ₎ = E[x_t x₃ᵀ] (M₍₃₎ᵀ)⁺ diag(w)⁻¹.
	pm3, err := pinvK(m3.T(), k)
	if err != nil {
		return nil, err
	}
	for t, e := range []mat.Matrix{cs.e31.T(), cs.e32.T()} {
		var m mat.Dense
		m.Mul(e, pm3)
		for i := range k {
			col := m.ColView(i).(*mat.VecDense)
			col.ScaleVec(1/out.Weights[i], col)
		}
		out.Means[t] = &m
	}
	return out, nil
}

// CrossMoments streams one pass of the three views' cross moments
// E[x₁x₂ᵀ] (d₁×d₂), E[x₃x₂ᵀ] (d₃×d₂) and E[x₃x₁ᵀ] (d₃×d₁), and the number of
// triples.
func CrossMoments(ctx context.Context, pass Pass, dims [3]int, workers int) (e12, e32, e31 *mat.Dense, n int64, err error) {
	d1, d2, d3 := dims[0], dims[1], dims[2]
	type pairAcc struct {
		n             int64
		p12, p32, p31 *mat.Dense
	}
	pa := make([]pairAcc, workers)
	for i := range pa {
		pa[i].p12 = mat.NewDense(d1, d2, nil)
		pa[i].p32 = mat.NewDense(d3, d2, nil)
		pa[i].p31 = mat.NewDense(d3, d1, nil)
	}
	err = pass(ctx, workers, func(w int, x1, x2, x3 blas64.General) error {
		a := &pa[w]
		a.n += int64(x1.Rows)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, x1, x2, 1, a.p12.RawMatrix())
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, x3, x2, 1, a.p32.RawMatrix())
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, x3, x1, 1, a.p31.RawMatrix())
		return nil
	})
	if err != nil {
		return nil, nil, nil, 0, err
	}
	for i := 1; i < workers; i++ {
		pa[0].n += pa[i].n
		pa[0].p12.Add(pa[0].p12, pa[i].p12)
		pa[0].p32.Add(pa[0].p32, pa[i].p32)
		pa[0].p31.Add(pa[0].p31, pa[i].p31)
	}
	n = pa[0].n
	if n == 0 {
		return nil, nil, nil, 0, errors.New("multiview: no triples")
	}
	nf := float64(n)
	e12, e32, e31 = pa[0].p12, pa[0].p32, pa[0].p31
	e12.Scale(1/nf, e12)
	e32.Scale(1/nf, e32)
	e31.Scale(1/nf, e31)
	return e12, e32, e31, n, nil
}

// whitenedTriple streams the second pass: the average of
// (P₁ᵀx₁)⊗(P₂ᵀx₂)⊗(P₃ᵀx₃) over the triples, symmetrised (it is symmetric in
// expectation), with P_t the d_t×k maps of the views; O(k³) per triple.
func whitenedTriple(ctx context.Context, pass Pass, p1t, p2t, p3t *mat.Dense, workers int) (*solver.Sym3, int64, error) {
	_, k := p3t.Dims()
	type triAcc struct {
		n int64
		t *mat.Dense // k²×k
		s tripleScratch
	}
	ta := make([]triAcc, workers)
	for i := range ta {
		ta[i].t = mat.NewDense(k*k, k, nil)
	}
	err := pass(ctx, workers, func(w int, x1, x2, x3 blas64.General) error {
		a := &ta[w]
		a.n += int64(x1.Rows)
		a.s.add(x1, x2, x3, p1t, p2t, p3t, a.t.RawMatrix().Data)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	for i := 1; i < workers; i++ {
		ta[0].n += ta[i].n
		ta[0].t.Add(ta[0].t, ta[i].t)
	}
	n := ta[0].n
	if n == 0 {
		return nil, 0, errors.New("multiview: no triples")
	}
	return symmetrised(ta[0].t.RawMatrix().Data, n, k), n, nil
}

// tripleScratch is one worker's scratch for the whitened triples.
type tripleScratch struct{ a, b, c, e []float64 }

// add adds Σ (P₁ᵀx₁)⊗(P₂ᵀx₂)⊗(P₃ᵀx₃) over the triples of a block to raw
// (k²×k, row-major: row i·k+j, column l).
func (a *tripleScratch) add(x1, x2, x3 blas64.General, p1t, p2t, p3t *mat.Dense, raw []float64) {
	_, k := p3t.Dims()
	r := x1.Rows
	if cap(a.a) < r*k {
		a.a, a.b, a.c = make([]float64, r*k), make([]float64, r*k), make([]float64, r*k)
		a.e = make([]float64, r*k*k)
	}
	za := blas64.General{Rows: r, Cols: k, Stride: k, Data: a.a[:r*k]}
	zb := blas64.General{Rows: r, Cols: k, Stride: k, Data: a.b[:r*k]}
	zc := blas64.General{Rows: r, Cols: k, Stride: k, Data: a.c[:r*k]}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x1, p1t.RawMatrix(), 0, za)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x2, p2t.RawMatrix(), 0, zb)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x3, p3t.RawMatrix(), 0, zc)
	ab := blas64.General{Rows: r, Cols: k * k, Stride: k * k, Data: a.e[:r*k*k]}
	for i := range r {
		ra, rb := za.Data[i*k:(i+1)*k], zb.Data[i*k:(i+1)*k]
		row := ab.Data[i*k*k : (i+1)*k*k]
		for p, u := range ra {
			for q, v := range rb {
				row[p*k+q] = u * v
			}
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, ab, zc, 1, blas64.General{Rows: k * k, Cols: k, Stride: k, Data: raw})
}

// symmetrised is the average over n triples of the raw sums (k²×k), made
// symmetric (it is symmetric in expectation).
func symmetrised(raw []float64, n int64, k int) *solver.Sym3 {
	nf := float64(n)
	at := func(i, j, l int) float64 { return raw[(i*k+j)*k+l] }
	t := solver.NewSym3(k)
	for i := range k {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				s := at(i, j, l) + at(i, l, j) + at(j, i, l) + at(j, l, i) + at(l, i, j) + at(l, j, i)
				t.Set(i, j, l, s/(6*nf))
			}
		}
	}
	return t
}

// pinvK returns the rank-k truncated pseudo-inverse of a (via the SVD).
func pinvK(a mat.Matrix, k int) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("multiview: SVD did not converge")
	}
	s := svd.Values(nil)
	if k > len(s) || !(s[k-1] > 1e-12*s[0]) {
		rank := 0
		for rank < len(s) && s[rank] > 1e-12*s[0] {
			rank++
		}
		return nil, &models.ShortError{Positive: rank, Err: fmt.Errorf("%w: a cross moment has rank below k=%d (singular value %d of %d is %.3g)", ErrSpectrum, k, k, len(s), s[min(k, len(s))-1])}
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	r, _ := u.Dims()
	c, _ := v.Dims()
	vs := mat.DenseCopyOf(v.Slice(0, c, 0, k))
	for j := range k {
		col := vs.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/s[j], col)
	}
	var out mat.Dense
	out.Mul(vs, u.Slice(0, r, 0, k).T())
	return &out, nil
}
