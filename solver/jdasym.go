package solver

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// asymPairCos is the product |cos(b̂_i, b̂_j)|·|cos(â_i, â_j)| above which two
// columns of the 2d×2d diagonaliser are taken to be the ± copies (b; ±a) of
// one component. The copies agree to the noise level (product ≈ 1); two
// distinct components reach it only if both modes are coherent above 0.7.
const asymPairCos = 0.5

// JointDiagAsym factors a general third-order tensor T ≈ Σ π_i a_i⊗b_i⊗c_i
// by simultaneous diagonalisation ([003] §6, docs/MATH.md §4.5 "Asymmetric
// tensors"). The mode-3 projections M_l = T(I,I,w_l) = A Λ_l Bᵀ (d1×d2) give
// the symmetric (d1+d2)×(d1+d2) matrices
//
//	N_l = [[0, M_lᵀ], [M_l, 0]] = ½ [B B; A −A] diag(Λ_l, −Λ_l) [B B; A −A]ᵀ
//
// which are jointly diagonalised (QRJ1D for NonOrthogonal; Jacobi for
// Orthogonal, right when A and B have orthonormal columns). When r is below
// d1 or d2, M_l is first reduced to r×r in orthonormal bases of its column
// and row ranges (span A, span B), so N_l is 2r×2r and full rank. Every
// component appears twice, as (b_i; ±a_i) with diagonal ±π_i c_iᵀw_l: the
// columns are paired (asymPairCos) and each pair averaged, b_i read from the
// top half and a_i from the bottom. Within a pair the non-orthogonal
// diagonaliser is not unique ((b; a/c) and (b; −a/c) diagonalise for every
// c), which is harmless because each half is normalised on its own, but
// lets QRJ1D drift along c without lowering the objective; the stall rule
// ends such a stage. The third
// mode and the weight follow from π_i c_i = T((A⁺)ᵀe_i, (B⁺)ᵀe_i, I), one
// Contract call; π_i = ‖π_i c_i‖ > 0. With twoStage the projections are
// repeated along the ĉ_i (plug-in), starting from the first diagonaliser.
//
// opt.Projections is L0 (default 2·d3 for NOJD; 5/10/20 for OJD as in the
// symmetric case), opt.Iters and opt.Tol as in JointDiagWith. r must be at
// most min(d1, d2); fewer than r separable components is an error wrapping
// ErrDegenerate. Iters counts sweeps; Residual is filled when t is a Normer.
func JointDiagAsym(ctx context.Context, t Asym, r int, opt Options, method JDMethod, twoStage bool) (*CP, error) {
	d1, d2, d3 := t.Dims()
	name := "asym-" + method.name(twoStage)
	if r < 1 || r > min(d1, d2) {
		return nil, fmt.Errorf("%s: %w: rank %d must be in [1, min(d1, d2) = %d]", name, ErrRank, r, min(d1, d2))
	}
	l0 := opt.Projections
	if l0 <= 0 {
		l0 = DefaultProjections(d3, method)
	}
	if l0 < 2 {
		return nil, fmt.Errorf("%s: %w: need at least 2 projections, got %d", name, ErrDegenerate, l0)
	}
	ws := mat.NewDense(d3, l0, nil)
	randomUnit(ws, newRNG(opt.Seed))
	res := &Result{Converged: true}
	cp, bases, xinv, err := asymStage(ctx, t, r, ws, [2]*mat.Dense{}, nil, opt, method, res, name)
	if err != nil {
		return nil, err
	}
	if twoStage {
		ws = mat.DenseCopyOf(cp.C)
		if cp, _, _, err = asymStage(ctx, t, r, ws, bases, xinv, opt, method, res, name); err != nil {
			return nil, err
		}
	}
	cp.Iters = float64(res.Iters)
	cp.Starts = 1
	cp.Converged, cp.Reason = res.Converged, res.Reason
	cp.Residual = cpResidual(ctx, order3{t}, cp.W, []*mat.Dense{cp.A, cp.B, cp.C})
	return cp, nil
}

// asymStage is one stage of JointDiagAsym: projections along the columns of
// ws, reduction to the ranges' bases (estimated afresh), joint
// diagonalisation from x0 (given in the coordinates of bases0; nil for I),
// pairing and third-mode recovery.
func asymStage(ctx context.Context, t Asym, r int, ws *mat.Dense, bases0 [2]*mat.Dense, x0 []float64, opt Options, method JDMethod, res *Result, name string) (*CP, [2]*mat.Dense, []float64, error) {
	var bases [2]*mat.Dense
	d1, d2, _ := t.Dims()
	ms, err := asymSlices(ctx, t, ws)
	if err != nil {
		return nil, bases, nil, err
	}
	// Reduce M_l to r×r in bases of its column (mode 1) and row (mode 2)
	// ranges, so that N_l is 2r×2r and full rank (see jdStage).
	red := make([]mat.Matrix, len(ms))
	mts := make([]mat.Matrix, len(ms))
	for i, m := range ms {
		red[i], mts[i] = m, m.T()
	}
	if r < d1 {
		if bases[0], err = signalBasis(red, r, name); err != nil {
			return nil, bases, nil, err
		}
	}
	if r < d2 {
		if bases[1], err = signalBasis(mts, r, name); err != nil {
			return nil, bases, nil, err
		}
	}
	if bases[0] != nil || bases[1] != nil {
		red = reduce(red, orIdentity(bases[0], d1), orIdentity(bases[1], d2))
	}
	n1, n2 := red[0].Dims()
	n := n1 + n2
	ns := make([]mat.Matrix, len(red))
	for l, m := range red {
		nl := mat.NewSymDense(n, nil)
		for i := 0; i < n1; i++ {
			for j := 0; j < n2; j++ {
				nl.SetSym(j, n2+i, m.At(i, j))
			}
		}
		ns[l] = nl
	}
	if x0 != nil {
		// N's coordinates are (mode-2 basis; mode-1 basis).
		x0 = changeBasis(x0, n, blockDiag(orIdentity(bases0[1], d2), orIdentity(bases0[0], d1)),
			blockDiag(orIdentity(bases[1], d2), orIdentity(bases[0], d1)))
	}
	as, xinv, err := jdPrepare(ns, x0, name)
	if err != nil {
		return nil, bases, nil, err
	}
	if err := jdRun(ctx, as, xinv, n, method, opt, res, name, false); err != nil {
		return nil, bases, nil, err
	}
	x, _, order, err := jdColumns(as, xinv, n, min(2*r, n), name)
	if err != nil {
		return nil, bases, nil, err
	}
	a, b, err := pairHalves(x, order, n2, r, name)
	if err != nil {
		return nil, bases, nil, err
	}
	a, b = liftCols(bases[0], a), liftCols(bases[1], b)
	c, w, err := thirdMode(ctx, t, a, b, name)
	if err != nil {
		return nil, bases, nil, err
	}
	return &CP{W: w, A: a, B: b, C: c, Found: r}, bases, xinv, nil
}

// blockDiag returns diag(a, b).
func blockDiag(a, b *mat.Dense) *mat.Dense {
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	out := mat.NewDense(ra+rb, ca+cb, nil)
	out.Slice(0, ra, 0, ca).(*mat.Dense).Copy(a)
	out.Slice(ra, ra+rb, ca, ca+cb).(*mat.Dense).Copy(b)
	return out
}

// orIdentity returns b, or the d×d identity when b is nil.
func orIdentity(b *mat.Dense, d int) *mat.Dense {
	if b != nil {
		return b
	}
	id := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		id.Set(i, i, 1)
	}
	return id
}

// liftCols maps reduced unit columns back (B·x, renormalised), or returns x when B is nil.
func liftCols(b, x *mat.Dense) *mat.Dense {
	if b == nil {
		return x
	}
	var out mat.Dense
	out.Mul(b, x)
	normalizeCols(&out)
	return &out
}

// asymSlices returns M_l = T(I,I,w_l) (d1×d2) for the columns of ws; column
// j of M_l is the mode-0 contraction with e_j and w_l, batched so one
// Contract call carries at most svdBlockCols columns.
func asymSlices(ctx context.Context, t Asym, ws *mat.Dense) ([]*mat.Dense, error) {
	d1, d2, d3 := t.Dims()
	_, l := ws.Dims()
	out := make([]*mat.Dense, l)
	per := max(1, svdBlockCols/d2)
	for s0 := 0; s0 < l; s0 += per {
		s1 := min(l, s0+per)
		m := s1 - s0
		x := mat.NewDense(d2, m*d2, nil)
		y := mat.NewDense(d3, m*d2, nil)
		for s := 0; s < m; s++ {
			for j := 0; j < d2; j++ {
				x.Set(j, s*d2+j, 1)
				for i := 0; i < d3; i++ {
					y.Set(i, s*d2+j, ws.At(i, s0+s))
				}
			}
		}
		z := mat.NewDense(d1, m*d2, nil)
		if err := t.Contract(ctx, 0, z, x, y); err != nil {
			return nil, err
		}
		for s := 0; s < m; s++ {
			out[s0+s] = mat.DenseCopyOf(z.Slice(0, d1, s*d2, (s+1)*d2))
		}
	}
	return out, nil
}

// pairHalves walks the diagonaliser's columns in energy order, splits each
// into b̂ (top d2 rows) and â (bottom), and merges a column into an earlier
// one when they are the ± copies of one component (asymPairCos), averaging
// with aligned signs. It returns the first r components (unit columns).
func pairHalves(x *mat.Dense, order []int, d2, r int, name string) (a, b *mat.Dense, err error) {
	n, _ := x.Dims()
	d1 := n - d2
	var as, bs [][]float64
	merged := []bool{}
	for _, i := range order {
		col := mat.Col(nil, i, x)
		bh, ah := unit(col[:d2]), unit(col[d2:])
		if bh == nil || ah == nil {
			continue // one half vanished: not a component
		}
		dup := -1
		for j := range as {
			if merged[j] {
				continue
			}
			if math.Abs(dot(bh, bs[j]))*math.Abs(dot(ah, as[j])) > asymPairCos {
				dup = j
				break
			}
		}
		if dup >= 0 {
			addAligned(bs[dup], bh)
			addAligned(as[dup], ah)
			merged[dup] = true
			continue
		}
		if len(as) == r {
			if allMerged(merged) {
				break
			}
			continue // still looking for the partners of unpaired columns
		}
		as, bs = append(as, ah), append(bs, bh)
		merged = append(merged, false)
	}
	if len(as) < r {
		return nil, nil, fmt.Errorf("%s: %w: only %d separable components in the projections, %d requested; lower the rank", name, ErrDegenerate, len(as), r)
	}
	a, b = mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for j := 0; j < r; j++ {
		a.SetCol(j, unit(as[j]))
		b.SetCol(j, unit(bs[j]))
	}
	return a, b, nil
}

func allMerged(m []bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// unit returns x/‖x‖ (a copy), or nil for a zero vector.
func unit(x []float64) []float64 {
	n := math.Sqrt(dot(x, x))
	if !(n > 0) {
		return nil
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v / n
	}
	return out
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// addAligned adds y to x after flipping y's sign to agree with x.
func addAligned(x, y []float64) {
	s := math.Copysign(1, dot(x, y))
	for i := range x {
		x[i] += s * y[i]
	}
}

// thirdMode returns the unit c_i and weights π_i from
// π_i c_i = T((A⁺)ᵀe_i, (B⁺)ᵀe_i, I) (docs/MATH.md §4.5).
func thirdMode(ctx context.Context, t Asym, a, b *mat.Dense, name string) (*mat.Dense, []float64, error) {
	_, _, d3 := t.Dims()
	_, r := a.Dims()
	pa, err := pinvT(a)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: the first-mode factors are not linearly independent (%v)", name, ErrDegenerate, err)
	}
	pb, err := pinvT(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: the second-mode factors are not linearly independent (%v)", name, ErrDegenerate, err)
	}
	c := mat.NewDense(d3, r, nil)
	if err := t.Contract(ctx, 2, c, pa, pb); err != nil {
		return nil, nil, err
	}
	w := colNorms(c)
	for j, v := range w {
		if !(v > 0) {
			return nil, nil, fmt.Errorf("%s: %w: component %d has a zero third mode", name, ErrDegenerate, j)
		}
	}
	normalizeCols(c)
	return c, w, nil
}

// pinvT returns (A⁺)ᵀ = A(AᵀA)⁻¹ for a full-column-rank A.
func pinvT(a *mat.Dense) (*mat.Dense, error) {
	var g mat.Dense
	g.Mul(a.T(), a)
	var x mat.Dense
	if err := x.Solve(&g, a.T()); err != nil {
		return nil, err
	}
	return mat.DenseCopyOf(x.T()), nil
}
