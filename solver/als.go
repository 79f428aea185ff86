package solver

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// ALS defaults: ALS converges linearly, often slowly ("swamps"), hence the large cap.
const (
	defaultALSSweeps = 500
	defaultALSTol    = 1e-10
	// exactFit is the relative residual below which a fit counts as exact
	// (the norm identity bottoms out near 1e-8).
	exactFit = 1e-6
)

// CPALS fits T ≈ Σ_i W_i A_i⊗B_i⊗C_i by alternating least squares: each mode
// update is X ← T_(mode)(Y⊙Z)(YᵀY ∗ ZᵀZ)⁻¹, where T_(mode)(Y⊙Z) is one
// Contract call. It starts from init when non-nil (refinement) and from
// random unit factors (opt.Seed) otherwise; opt.Iters caps sweeps (default
// 500) and it stops once no unit factor column moves more than opt.Tol
// (default 1e-10). Hitting the sweep cap returns the fit with Converged =
// false and Reason set. A singular Gram product (collinear factors) is an
// error wrapping ErrDegenerate, and so is a rank above the tensor's, seen
// as an exact fit (residual ≤ 1e-6; t must be a Normer) whose factors span
// fewer than r dimensions in every mode of dimension ≥ r, so that the fit
// is one of infinitely many; that error comes with the fit. Residual is
// filled when t is a Normer.
func CPALS(ctx context.Context, t Asym, r int, init *CP, opt Options) (*CP, error) {
	if r < 1 {
		return nil, fmt.Errorf("als: %w: rank %d < 1", ErrRank, r)
	}
	d1, d2, d3 := t.Dims()
	dims := [3]int{d1, d2, d3}
	sweeps, tol := opt.limits(defaultALSSweeps, defaultALSTol)
	var f [3]*mat.Dense
	if init != nil {
		f = [3]*mat.Dense{mat.DenseCopyOf(init.A), mat.DenseCopyOf(init.B), mat.DenseCopyOf(init.C)}
		for m := range f {
			if _, c := f[m].Dims(); c != r {
				panic(fmt.Sprintf("solver: CPALS: init has %d components, rank %d", c, r))
			}
		}
		// Fold the weights into C so the first A, B updates see them.
		for j, w := range init.W {
			for i := 0; i < d3; i++ {
				f[2].Set(i, j, f[2].At(i, j)*w)
			}
		}
	} else {
		rng := newRNG(opt.Seed)
		for m := range f {
			f[m] = mat.NewDense(dims[m], r, nil)
			randomUnit(f[m], rng)
		}
	}
	out := &CP{Starts: 1, Residual: math.NaN()}
	w := make([]float64, r)
	for s := 0; s < sweeps; s++ {
		out.Iters++
		moved := 0.0
		for mode := 0; mode < 3; mode++ {
			x, y := f[(mode+1)%3], f[(mode+2)%3]
			if mode == 1 {
				x, y = f[0], f[2]
			}
			g := mat.NewDense(dims[mode], r, nil)
			if err := t.Contract(ctx, mode, g, x, y); err != nil {
				return nil, err
			}
			var gx, gy mat.Dense
			gx.Mul(x.T(), x)
			gy.Mul(y.T(), y)
			gx.MulElem(&gx, &gy)
			// X = G (gx)⁻¹ ⇔ gx Xᵀ = Gᵀ (gx symmetric).
			var xt mat.Dense
			if err := xt.Solve(&gx, g.T()); err != nil {
				return nil, fmt.Errorf("als: %w: Gram product is singular at sweep %d (%v); the factors collapsed, lower the rank", ErrDegenerate, s+1, err)
			}
			nx := mat.DenseCopyOf(xt.T())
			for j := 0; j < r; j++ {
				w[j] = mat.Norm(nx.ColView(j), 2)
			}
			if mode < 2 {
				// Unit columns for A and B; the scale lives in C.
				normalizeCols(nx)
				old := mat.DenseCopyOf(f[mode])
				moved = math.Max(moved, signFreeChange(nx, old))
			} else {
				old := mat.DenseCopyOf(f[2])
				normalizeCols(old)
				un := mat.DenseCopyOf(nx)
				normalizeCols(un)
				moved = math.Max(moved, signFreeChange(un, old))
			}
			f[mode] = nx
		}
		if moved <= tol {
			out.Converged = true
			break
		}
	}
	out.A, out.B = f[0], f[1]
	out.W = make([]float64, r)
	for j := 0; j < r; j++ {
		out.W[j] = mat.Norm(f[2].ColView(j), 2)
	}
	out.C = f[2]
	normalizeCols(out.C)
	out.Found = r
	if !out.Converged {
		out.Reason = fmt.Sprintf("als: %d sweeps without meeting tol %.3g", sweeps, tol)
	}
	out.Residual = cpResidual(ctx, order3{t}, out.W, []*mat.Dense{out.A, out.B, out.C})
	// An exact fit whose factors are deficient in every mode that could
	// hold r independent ones is over-parameterised; a deficient fit with a
	// large residual is a stall with collapsed components (random starts at
	// full rank), returned as is: its Residual tells.
	if m, span, ok := overParameterised([]*mat.Dense{out.A, out.B, out.C}); ok && out.Residual <= exactFit {
		return out, fmt.Errorf("als: %w: the %d factors span only %d dimensions in mode %d, and no mode of dimension ≥ %d has %d independent factors: the tensor has fewer than %d components and this fit is one of infinitely many; lower the rank", ErrDegenerate, r, span, m+1, r, r, r)
	}
	return out, nil
}

// overParameterised reports a CP that spans fewer than r dimensions in
// every mode whose dimension is at least r (r columns there are linearly
// independent for any identifiable tensor with that many components, up to
// rounding): with more components than the tensor has, ALS lands on one of
// the infinitely many exact fits inside the low-rank subspace (on a rank-2
// tensor asked for 4, in two sweeps, residual 0). It returns the first such
// mode and its numerical rank (singular values above 1e-10 of the largest).
// Overcomplete modes (dimension < r) are not judged.
func overParameterised(f []*mat.Dense) (mode, span int, ok bool) {
	mode = -1
	for m, x := range f {
		d, r := x.Dims()
		if r > d {
			continue
		}
		var svd mat.SVD
		if !svd.Factorize(x, mat.SVDNone) {
			return 0, 0, false
		}
		sv := svd.Values(nil)
		n := countAbove(sv, 1e-10*sv[0])
		if n == r {
			return 0, 0, false
		}
		if mode < 0 {
			mode, span = m, n
		}
	}
	return mode, span, mode >= 0
}

// signFreeChange is max_j ‖x_j − y_j‖ over unit columns.
func signFreeChange(x, y *mat.Dense) float64 {
	_, c := x.Dims()
	m := 0.0
	for j := 0; j < c; j++ {
		m = math.Max(m, math.Sqrt(colDistSq(x, y, j)))
	}
	return m
}

// Symmetrize turns an asymmetric CP of a symmetric tensor into symmetric
// components: each u_i is the normalised sum of a_i, ±b_i, ±c_i (signs
// aligned to a_i), and the weights are the least-squares fit of
// Σλ_i u_i⊗3 to t, λ = G⁻¹ (T(u_i,u_i,u_i)) with G_ij = (u_iᵀu_j)³. Factors are
// flipped so every weight is positive.
func Symmetrize(ctx context.Context, t Tensor, cp *CP) (*Result, error) {
	d, r := cp.A.Dims()
	u := mat.NewDense(d, r, nil)
	for j := 0; j < r; j++ {
		sb := math.Copysign(1, mat.Dot(cp.A.ColView(j), cp.B.ColView(j)))
		sc := math.Copysign(1, mat.Dot(cp.A.ColView(j), cp.C.ColView(j)))
		for i := 0; i < d; i++ {
			u.Set(i, j, cp.A.At(i, j)+sb*cp.B.At(i, j)+sc*cp.C.At(i, j))
		}
	}
	normalizeCols(u)
	lam, err := fitWeights(ctx, t, u)
	if err != nil {
		return nil, err
	}
	res := &Result{Iters: int(math.Round(cp.Iters)), Restarts: cp.Starts, Converged: cp.Converged, Reason: cp.Reason}
	res.finish(ctx, t, lam, u)
	res.EigResidual = math.NaN()
	return res, nil
}

// fitWeights solves min_λ ‖T − Σλ_i u_i⊗3‖_F for fixed unit u and flips u_i
// so λ_i > 0.
func fitWeights(ctx context.Context, t Tensor, u *mat.Dense) ([]float64, error) {
	_, r := u.Dims()
	rhs := make([]float64, r)
	if err := Cubic(ctx, t, rhs, u); err != nil {
		return nil, err
	}
	var g mat.Dense
	g.Mul(u.T(), u)
	g.Apply(func(_, _ int, v float64) float64 { return v * v * v }, &g)
	var lam mat.VecDense
	if err := lam.SolveVec(&g, mat.NewVecDense(r, rhs)); err != nil {
		return nil, fmt.Errorf("solver: %w: factors are (nearly) repeated, the weight fit is singular (%v)", ErrDegenerate, err)
	}
	out := make([]float64, r)
	d, _ := u.Dims()
	for j := range out {
		out[j] = lam.AtVec(j)
		if out[j] < 0 {
			out[j] = -out[j]
			for i := 0; i < d; i++ {
				u.Set(i, j, -u.At(i, j))
			}
		}
	}
	return out, nil
}

// ALSSym is CP-ALS on a symmetric tensor (through SymAsym), symmetrised at
// the end; r may exceed Dim. Options as in CPALS.
//
// Random starts often stall ALS at non-global fixed points, so for r ≤ Dim it
// starts from the eigenvectors of a random slice T(I,I,θ) with the r largest
// |eigenvalues| (exact for an orthogonal tensor with distinct projected
// weights; Jennrich-like); further columns are random. ALSRandom is the
// random-start ALS the papers compare against.
func ALSSym(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
	init, err := sliceInit(ctx, t, r, opt.Seed)
	if err != nil {
		return nil, err
	}
	cp, err := CPALS(ctx, SymAsym(t), r, init, opt)
	if err != nil {
		return nil, err
	}
	return Symmetrize(ctx, t, cp)
}

// ALSRandom is CP-ALS from random unit factors (opt.Seed) on a symmetric
// tensor, symmetrised at the end: the baseline of [003]'s and [002]'s
// experiments. It is kept for comparison; ALSSym is the better ALS.
func ALSRandom(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
	cp, err := CPALS(ctx, SymAsym(t), r, nil, opt)
	if err != nil {
		return nil, err
	}
	return Symmetrize(ctx, t, cp)
}

// sliceInit returns unit starting factors for ALS from one random slice.
func sliceInit(ctx context.Context, t Tensor, r int, seed uint64) (*CP, error) {
	k := t.Dim()
	rng := newRNG(seed)
	theta := mat.NewDense(k, 1, nil)
	randomUnit(theta, rng)
	s := mat.NewSymDense(k, nil)
	if err := SliceOf(ctx, t, s, theta.RawMatrix().Data); err != nil {
		return nil, err
	}
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		return nil, fmt.Errorf("als: %w: eigendecomposition of a slice failed", ErrDegenerate)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(vals[idx[a]]) > math.Abs(vals[idx[b]]) })
	a := mat.NewDense(k, r, nil)
	randomUnit(a, rng)
	w := make([]float64, r)
	col := make([]float64, k)
	for j := 0; j < min(r, k); j++ {
		mat.Col(col, idx[j], &vecs)
		a.SetCol(j, col)
	}
	for j := range w {
		w[j] = 1
	}
	return &CP{W: w, A: a, B: mat.DenseCopyOf(a), C: mat.DenseCopyOf(a)}, nil
}

// Refine runs up to sweeps CP-ALS sweeps on t starting from res and returns
// the symmetrised refinement; it is how any solver's answer is polished.
func Refine(ctx context.Context, t Tensor, res *Result, sweeps int, opt Options) (*Result, error) {
	_, r := res.Factors.Dims()
	init := &CP{W: res.Weights, A: res.Factors, B: res.Factors, C: res.Factors}
	opt.Iters = sweeps
	cp, err := CPALS(ctx, SymAsym(t), r, init, opt)
	if err != nil {
		return nil, err
	}
	out, err := Symmetrize(ctx, t, cp)
	if err != nil {
		return nil, err
	}
	out.Iters += res.Iters
	out.Restarts = res.Restarts
	return out, nil
}
