package solver

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// JDMethod selects the joint diagonaliser of the two-stage method.
type JDMethod int

const (
	// Orthogonal uses Jacobi sweeps with the Cardoso–Souloumiac angle (OJD);
	// right for whitened or otherwise orthogonal factors.
	Orthogonal JDMethod = iota
	// NonOrthogonal uses QRJ1D (Jacobi rotations alternating with unit
	// triangular updates, NOJD); for general linearly independent factors.
	NonOrthogonal
)

// Joint-diagonalisation defaults.
// Jacobi sweeps converge quadratically, QRJ1D linearly, hence the different caps.
const (
	defaultOJDSweeps  = 100
	defaultNOJDSweeps = 1000
	defaultJDTol      = 1e-10
	maxTriangular     = 1.0 // |a| clip of a triangular step, as in Afsari's code
	// A stage also stops when off(A)/‖A‖² fell by less than stallRel (relative)
	// over the last stallWindow sweeps.
	stallWindow = 5
	stallRel    = 1e-6
)

// DefaultProjections is L0, the random projections of the first stage of
// joint diagonalisation of a d-dimensional tensor: the authors' code uses
// 5/10/20 projections for d < 100, < 200, ≥ 200 with Jacobi; QRJ1D needs more
// because its error depends on the spread of the projected eigenvalues, so it
// gets 2d (as in the authors' non-orthogonal script).
func DefaultProjections(d int, m JDMethod) int {
	if m == NonOrthogonal {
		return 2 * d
	}
	switch {
	case d < 100:
		return 5
	case d < 200:
		return 10
	}
	return 20
}

// JDPlugIn selects the directions of the second-stage (plug-in) projections.
type JDPlugIn int

const (
	// PlugInFactors projects along the first stage's unit factor estimates
	// û_i, as the authors' public code does. It is the default: on
	// ill-conditioned non-orthogonal factors it is 5–10× more accurate than
	// PlugInInverse (bench/solver RESULTS.md), whose matrices carry the
	// signal π_i/‖v_i‖, small when ‖U⁻¹‖ is large.
	PlugInFactors JDPlugIn = iota
	// PlugInInverse projects along the normalised inverse factors (rows of
	// X⁻¹), the choice [003] Thm 4 analyses (ρ_ij ≈ 0, error O(‖V‖³ε)).
	// For orthogonal factors the two coincide.
	PlugInInverse
)

// JDOptions selects the variant of JointDiagWith.
type JDOptions struct {
	Method JDMethod
	// TwoStage adds the plug-in stage (OJD1/NOJD1); otherwise OJD0/NOJD0.
	TwoStage bool
	PlugIn   JDPlugIn
}

// JointDiag is JointDiagWith with plug-in projections along the factor
// estimates.
func JointDiag(ctx context.Context, t Tensor, r int, opt Options, method JDMethod, twoStage bool) (*Result, error) {
	return JointDiagWith(ctx, t, r, opt, JDOptions{Method: method, TwoStage: twoStage})
}

// JointDiagWith factors t by simultaneous diagonalisation of its projections
// ([003] Alg. 1, docs/MATH.md §4.5): L0 = opt.Projections random unit projections
// T(I,I,w_l) are jointly diagonalised; with jo.TwoStage the projections
// along the first stage's factors (jo.PlugIn) are diagonalised again,
// starting from the first stage's diagonaliser. When r < Dim the slices are
// reduced to r×r in an orthonormal basis of their common range (the top-r
// eigenvectors of Σ_l M_l M_lᵀ, span(U) up to noise) before diagonalising,
// instead of diagonalising d×d and keeping the r columns of largest
// diagonal energy as the authors' code does (see jdStage for why). Factors
// come out largest diagonal energy Σ_l |D_l[i,i]|·‖x_i‖² first. Weights are
// the least-squares fit of the diagonals (docs/MATH.md §4.5) and factors are flipped
// so every weight is positive (λ(−v)⊗3 = −λv⊗3).
//
// The non-orthogonal sweeps (QRJ1D: Jacobi rotations, then unit triangular
// steps) balance the rows of the diagonaliser after every sweep as Afsari's
// reference code does; without it the objective drifts into badly scaled
// rows and stops 5× further from the truth on ill-conditioned factors.
//
// Slices come from t's Slicer or the Apply fallback, so implicit tensors
// work. opt.Iters caps sweeps per stage (default 100 for OJD, 1000 for
// NOJD), opt.Tol the largest rotation sine / triangular step that counts as
// movement (default 1e-10); a stage also stops once the relative
// off-diagonal energy stalls (noisy or r < Dim input never meets Tol,
// because the null block's rotations are undetermined). Hitting the cap
// sets Converged = false and Reason but still returns the answer. A rank
// above what the projections support, a zero tensor or a singular
// diagonaliser is an error wrapping ErrDegenerate; r > Dim wraps ErrRank.
func JointDiagWith(ctx context.Context, t Tensor, r int, opt Options, jo JDOptions) (*Result, error) {
	d := t.Dim()
	method := jo.Method
	name := method.name(jo.TwoStage)
	if r < 1 || r > d {
		return nil, fmt.Errorf("%s: %w: rank %d must be in [1, dim=%d] (joint diagonalisation of d×d slices finds at most d factors)", name, ErrRank, r, d)
	}
	l0 := opt.Projections
	if l0 <= 0 {
		l0 = DefaultProjections(d, method)
	}
	if l0 < 2 {
		return nil, fmt.Errorf("%s: %w: need at least 2 projections, got %d", name, ErrDegenerate, l0)
	}
	rng := newRNG(opt.Seed)
	ws := mat.NewDense(d, l0, nil)
	randomUnit(ws, rng)
	res := &Result{Converged: true}
	st, err := jdStage(ctx, t, r, ws, nil, nil, opt, method, res, name)
	if err != nil {
		return nil, err
	}
	if jo.TwoStage {
		ws = mat.NewDense(d, r, nil)
		for i := 0; i < r; i++ {
			if jo.PlugIn == PlugInInverse {
				ws.SetCol(i, st.inv[i])
			} else {
				ws.SetCol(i, mat.Col(nil, i, st.u))
			}
		}
		normalizeCols(ws)
		if st, err = jdStage(ctx, t, r, ws, st.basis, st.xinv, opt, method, res, name); err != nil {
			return nil, err
		}
	}
	res.finish(ctx, t, st.pi, st.u)
	return res, nil
}

func (m JDMethod) name(twoStage bool) string {
	s := "ojd"
	if m == NonOrthogonal {
		s = "nojd"
	}
	if twoStage {
		return s + "1"
	}
	return s + "0"
}

// jdResult is one stage's answer: the r unit factors (columns, largest
// diagonal energy first), their inverse factors, the diagonaliser X⁻¹
// (row-major r×r, in the basis's coordinates), the basis and the signed
// weights.
type jdResult struct {
	u     *mat.Dense
	inv   [][]float64
	xinv  []float64
	basis *mat.Dense
	pi    []float64
}

// jdStage jointly diagonalises T(I,I,w_l) for the columns of ws. When
// r < d the slices are first reduced to r×r in an orthonormal basis of
// their common range (the given basis, or signalBasis of these slices):
// that range is span(U), so the r×r problem is full rank and has no null
// block, whose rotations are undetermined and whose rows can collapse onto
// each other and swamp the diagonal-energy ranking (this replaces the
// authors' code's selection of r columns out of d by energy). Each stage
// estimates its own basis: the plug-in slices separate every component
// well, while a few random projections may leave one weak. It starts from
// the diagonaliser x0 (nil for I), given in the coordinates of basis0 and
// carried over to the new basis (rows v ↦ v·B0ᵀB).
func jdStage(ctx context.Context, t Tensor, r int, ws, basis0 *mat.Dense, x0 []float64, opt Options, method JDMethod, res *Result, name string) (*jdResult, error) {
	d, l := ws.Dims()
	syms := make([]*mat.SymDense, l)
	for i := range syms {
		syms[i] = mat.NewSymDense(d, nil)
	}
	if err := Slices(ctx, t, syms, ws); err != nil {
		return nil, err
	}
	ms := make([]mat.Matrix, l)
	for i, s := range syms {
		ms[i] = s
	}
	var basis *mat.Dense
	if r < d {
		var err error
		if basis, err = signalBasis(ms, r, name); err != nil {
			return nil, err
		}
		ms = reduce(ms, basis, basis)
		if x0 != nil {
			x0 = changeBasis(x0, r, basis0, basis)
		}
	}
	as, xinv, err := jdPrepare(ms, x0, name)
	if err != nil {
		return nil, err
	}
	// The slices of a symmetric tensor, and Bᵀ·M·B of them, are symmetric.
	if err := jdRun(ctx, as, xinv, r, method, opt, res, name, true); err != nil {
		return nil, err
	}
	x, norms, order, err := jdColumns(as, xinv, r, r, name)
	if err != nil {
		return nil, err
	}
	out := &jdResult{u: mat.NewDense(d, r, nil), inv: make([][]float64, r), xinv: xinv, basis: basis, pi: make([]float64, r)}
	col := make([]float64, d)
	for c, i := range order {
		lift(col, basis, mat.Col(nil, i, x))
		for p := range col {
			col[p] /= norms[i]
		}
		// Least squares over the projections: π̂ (w_lᵀû) ≈ D_l[i,i]‖x_i‖².
		num, den := 0.0, 0.0
		for li, a := range as {
			proj := 0.0
			for p := 0; p < d; p++ {
				proj += ws.At(p, li) * col[p]
			}
			num += a[i*r+i] * norms[i] * norms[i] * proj
			den += proj * proj
		}
		if den == 0 {
			return nil, fmt.Errorf("%s: %w: factor %d is orthogonal to every projection", name, ErrDegenerate, c)
		}
		out.pi[c] = num / den
		if out.pi[c] < 0 {
			out.pi[c] = -out.pi[c]
			for p := range col {
				col[p] = -col[p]
			}
		}
		out.u.SetCol(c, col)
		out.inv[c] = make([]float64, d)
		lift(out.inv[c], basis, xinv[i*r:(i+1)*r])
	}
	return out, nil
}

// changeBasis returns the r×r diagonaliser x (row-major, rows in the
// coordinates of b0) with its rows expressed in the coordinates of b1:
// x·b0ᵀ·b1.
func changeBasis(x []float64, r int, b0, b1 *mat.Dense) []float64 {
	var m, out mat.Dense
	m.Mul(b0.T(), b1)
	out.Mul(mat.NewDense(r, r, x), &m)
	return out.RawMatrix().Data
}

// lift sets dst = B·x (x in the basis's coordinates), or copies x when B is nil.
func lift(dst []float64, b *mat.Dense, x []float64) {
	if b == nil {
		copy(dst, x)
		return
	}
	mat.NewVecDense(len(dst), dst).MulVec(b, mat.NewVecDense(len(x), x))
}

// signalBasis returns an orthonormal basis (d×r) of the top-r eigenvectors
// of Σ_l M_l M_lᵀ, the common range of the slices; fewer than r eigenvalues
// above 1e-12 of the largest (the eigensolver's rounding is about 1e-15 of
// it; singular values of the slices below 1e-6 of the largest) mean the
// projections support fewer components.
func signalBasis(ms []mat.Matrix, r int, name string) (*mat.Dense, error) {
	d, _ := ms[0].Dims()
	g := mat.NewSymDense(d, nil)
	for _, m := range ms {
		g.SymRankK(g, 1, m) // += M Mᵀ
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil, fmt.Errorf("%s: %w: eigendecomposition of the slices' Gram matrix failed", name, ErrDegenerate)
	}
	vals := eig.Values(nil) // ascending
	top := vals[d-1]
	if !(top > 0) {
		return nil, fmt.Errorf("%s: %w: every projection T(I,I,w) is zero", name, ErrDegenerate)
	}
	if vals[d-r] <= 1e-12*top {
		return nil, fmt.Errorf("%s: %w: only %d of the requested %d components carry energy in the projections; lower the rank", name, ErrDegenerate, countAbove(vals, 1e-12*top), r)
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	return mat.DenseCopyOf(vecs.Slice(0, d, d-r, d)), nil
}

// reduce returns Pᵀ M_l Q for every matrix.
func reduce(ms []mat.Matrix, p, q *mat.Dense) []mat.Matrix {
	out := make([]mat.Matrix, len(ms))
	for i, m := range ms {
		var tmp, red mat.Dense
		tmp.Mul(p.T(), m)
		red.Mul(&tmp, q)
		out[i] = &red
	}
	return out
}

// jdPrepare copies the matrices into row-major arrays, transformed by the
// starting diagonaliser x0 (A_l = X0 M_l X0ᵀ; identity when x0 is nil), and
// returns them with a copy of x0 to accumulate into.
func jdPrepare(ms []mat.Matrix, x0 []float64, name string) ([][]float64, []float64, error) {
	d, _ := ms[0].Dims()
	xinv := make([]float64, d*d)
	if x0 != nil {
		copy(xinv, x0)
	} else {
		for i := 0; i < d; i++ {
			xinv[i*d+i] = 1
		}
	}
	xi := mat.NewDense(d, d, xinv)
	total := 0.0
	as := make([][]float64, len(ms))
	for i, s := range ms {
		a := make([]float64, d*d)
		am := mat.NewDense(d, d, a)
		if x0 != nil {
			var tmp mat.Dense
			tmp.Mul(xi, s)
			am.Mul(&tmp, xi.T())
		} else {
			am.Copy(s)
		}
		as[i] = a
		total += mat.Norm(s, 2)
	}
	if !(total > 0) {
		return nil, nil, fmt.Errorf("%s: %w: every projection T(I,I,w) is zero", name, ErrDegenerate)
	}
	return as, xinv, nil
}

// jdRun runs the sweeps of one stage on full-rank matrices: Jacobi
// rotations, and for NOJD triangular steps and row balancing, until nothing
// moves more than tol, the off-diagonal energy stalls, or the sweep cap. It
// updates res's Iters, Converged, Reason and EigResidual. With sym (the
// matrices are symmetric up to rounding) OJD makes them exactly symmetric
// and its rotations keep them so (rotateSym); NOJD's triangular steps take
// the general path.
func jdRun(ctx context.Context, as [][]float64, xinv []float64, d int, method JDMethod, opt Options, res *Result, name string, sym bool) error {
	sym = sym && method == Orthogonal
	if sym {
		for _, a := range as {
			symmetrize(a, d)
		}
	}
	sweeps := defaultOJDSweeps
	if method == NonOrthogonal {
		sweeps = defaultNOJDSweeps
	}
	sweeps, tol := opt.limits(sweeps, defaultJDTol)
	converged := false
	var hist []float64 // relative off-diagonal energy after each sweep
	moved := 0.0
	for sw := 0; sw < sweeps && !converged; sw++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		res.Iters++
		moved = jacobiSweep(as, xinv, d, tol, sym)
		if method == NonOrthogonal {
			moved = math.Max(moved, triangularSweep(as, xinv, d))
			balanceRows(as, xinv, d)
		}
		// On noisy input the steps can keep moving along directions that
		// barely change the objective (the asymmetric reduction has one per
		// component, see JointDiagAsym), so they never reach tol; stop once
		// the relative off-diagonal energy has stalled over the last
		// stallWindow sweeps.
		off, all := offDiag(as, d)
		hist = append(hist, off/all)
		if n := len(hist); n > stallWindow && hist[n-1-stallWindow]-hist[n-1] <= stallRel*hist[n-1-stallWindow] {
			converged = true
		}
		converged = converged || moved <= tol
	}
	off, all := offDiag(as, d)
	if !converged {
		res.Converged = false
		res.Reason = fmt.Sprintf("%s: %d sweeps without meeting tol %.3g (last step %.3g, off-diagonal energy %.3g of the total)", name, sweeps, tol, moved, off/all)
	}
	res.EigResidual = math.Sqrt(off / all)
	return nil
}

// balanceRows rescales every row of the diagonaliser (and row and column of
// every matrix) so that the rows' absolute sums over all matrices are
// equal, as Afsari's QRJ1D code does; the objective is not invariant to row
// scale, and without it the rows drift to uneven scales and the sweeps
// end 5× further from the truth on ill-conditioned factors.
func balanceRows(as [][]float64, xinv []float64, d int) {
	for p := 0; p < d; p++ {
		s := 0.0
		for _, a := range as {
			for q := 0; q < d; q++ {
				s += math.Abs(a[p*d+q])
			}
		}
		if !(s > 0) || math.IsInf(s, 0) {
			continue
		}
		scaleRow(as, xinv, d, p, float64(len(as))/s)
	}
}

// scaleRow multiplies row p of the diagonaliser by f, and row and column p
// of every matrix.
func scaleRow(as [][]float64, xinv []float64, d, p int, f float64) {
	for q := 0; q < d; q++ {
		xinv[p*d+q] *= f
	}
	for _, a := range as {
		for q := 0; q < d; q++ {
			a[p*d+q] *= f
			a[q*d+p] *= f
		}
	}
}

// jdColumns inverts the diagonaliser and ranks its columns by scale-free
// diagonal energy Σ_l |D_l[i,i]|·‖x_i‖² (= Σ_l |π_i w_lᵀu_i|); it fails when
// fewer than r columns carry energy.
func jdColumns(as [][]float64, xinv []float64, d, r int, name string) (x *mat.Dense, norms []float64, order []int, err error) {
	x = new(mat.Dense)
	if err := x.Inverse(mat.NewDense(d, d, xinv)); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w: the joint diagonaliser is singular (%v); factors are not linearly independent", name, ErrDegenerate, err)
	}
	norms = colNorms(x)
	energy := make([]float64, d)
	for i := 0; i < d; i++ {
		for _, a := range as {
			energy[i] += math.Abs(a[i*d+i]) * norms[i] * norms[i]
		}
	}
	order = make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return energy[order[a]] > energy[order[b]] })
	if energy[order[r-1]] <= 1e-12*energy[order[0]] {
		return nil, nil, nil, fmt.Errorf("%s: %w: only %d of the requested %d components carry energy in the projections; lower the rank", name, ErrDegenerate, countAbove(energy, 1e-12*energy[order[0]]), r)
	}
	return x, norms, order, nil
}

// offDiag returns the off-diagonal and total squared entries summed over as.
func offDiag(as [][]float64, d int) (off, all float64) {
	for _, a := range as {
		for p := 0; p < d; p++ {
			for q := 0; q < d; q++ {
				v := a[p*d+q] * a[p*d+q]
				all += v
				if p != q {
					off += v
				}
			}
		}
	}
	return off, all
}

func countAbove(x []float64, t float64) int {
	n := 0
	for _, v := range x {
		if v > t {
			n++
		}
	}
	return n
}

// jacobiSweep applies one sweep of Givens rotations with the
// Cardoso–Souloumiac angle (docs/MATH.md §4.5) to every matrix (exactly symmetric
// ones with rotateSym when sym) and to X⁻¹, and returns the largest
// |sin θ| used.
func jacobiSweep(as [][]float64, xinv []float64, d int, tol float64, sym bool) float64 {
	rot := rotate
	if sym {
		rot = rotateSym
	}
	moved := 0.0
	for p := 0; p < d-1; p++ {
		for q := p + 1; q < d; q++ {
			c, s := jacobiAngle(as, d, p, q)
			if math.Abs(s) <= tol {
				continue
			}
			moved = math.Max(moved, math.Abs(s))
			for _, a := range as {
				rot(a, d, p, q, c, s)
			}
			rotateRows(xinv, d, p, q, c, s)
		}
	}
	return moved
}

// jacobiAngle returns (cos θ, sin θ) of the Givens rotation of pair (p, q)
// that minimises Σ_l off(A_l): A'_pp − A'_qq = (cos2θ, sin2θ)·h_l, so 2θ is
// the angle of the top eigenvector of G = Σ_l h_l h_lᵀ.
func jacobiAngle(as [][]float64, d, p, q int) (c, s float64) {
	var g11, g12, g22 float64
	for _, a := range as {
		h1 := a[p*d+p] - a[q*d+q]
		h2 := a[p*d+q] + a[q*d+p]
		g11 += h1 * h1
		g12 += h1 * h2
		g22 += h2 * h2
	}
	theta := 0.25 * math.Atan2(2*g12, g11-g22)
	return math.Cos(theta), math.Sin(theta)
}

// rotate sets a ← B a Bᵀ for the Givens B with B_pp = B_qq = c, B_pq = s, B_qp = −s.
func rotate(a []float64, d, p, q int, c, s float64) {
	rotateRows(a, d, p, q, c, s)
	blas64.Rot(blas64.Vector{N: d, Inc: d, Data: a[p:]}, blas64.Vector{N: d, Inc: d, Data: a[q:]}, c, s)
}

// rotateSym is rotate for an exactly symmetric a, which it keeps so: rows
// p and q are rotated and copied into columns p and q, and the 2×2 block is
// formed from its old entries. Half of rotate's arithmetic, and the columns,
// a row apart, are written rather than read and written: sweeps over k×k
// slices take 0.55–0.9 of rotate's time (go test ./solver -bench
// JacobiSweep).
func rotateSym(a []float64, d, p, q int, c, s float64) {
	app, aqq, apq := a[p*d+p], a[q*d+q], a[p*d+q]
	rp, rq := a[p*d:(p+1)*d], a[q*d:(q+1)*d]
	rq = rq[:len(rp)]
	for i, x := range rp {
		y := rq[i]
		rp[i] = c*x + s*y
		rq[i] = c*y - s*x
	}
	for i := range d {
		a[i*d+p] = rp[i]
		a[i*d+q] = rq[i]
	}
	cs, cc, ss := c*s, c*c, s*s
	rp[p] = cc*app + 2*cs*apq + ss*aqq
	rq[q] = ss*app - 2*cs*apq + cc*aqq
	v := cs*(aqq-app) + (cc-ss)*apq
	rp[q], rq[p] = v, v
}

// symmetrize sets the d×d row-major a to (a + aᵀ)/2.
func symmetrize(a []float64, d int) {
	for i := range d {
		for j := i + 1; j < d; j++ {
			v := (a[i*d+j] + a[j*d+i]) / 2
			a[i*d+j], a[j*d+i] = v, v
		}
	}
}

// rotateRows sets m ← B m for the same Givens B.
func rotateRows(m []float64, d, p, q int, c, s float64) {
	blas64.Rot(blas64.Vector{N: d, Inc: 1, Data: m[p*d:]}, blas64.Vector{N: d, Inc: 1, Data: m[q*d:]}, c, s)
}

// triangularSweep applies the QRJ1D unit-triangular steps B = I + a e_j e_iᵀ
// for every ordered pair i ≠ j with the exact minimising a (docs/MATH.md §4.5),
// clipped to |a| ≤ 1, and returns the largest |a|.
func triangularSweep(as [][]float64, xinv []float64, d int) float64 {
	moved := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if i == j {
				continue
			}
			num, den := 0.0, 0.0
			for _, a := range as {
				ri, rj := a[i*d:(i+1)*d], a[j*d:(j+1)*d]
				// Σ_{q≠j}: the full dot products minus the q = j terms.
				num += floats.Dot(ri, rj) - ri[j]*rj[j]
				den += floats.Dot(ri, ri) - ri[j]*ri[j]
			}
			if den == 0 {
				continue
			}
			x := -num / den
			x = math.Max(-maxTriangular, math.Min(maxTriangular, x))
			if x == 0 {
				continue
			}
			moved = math.Max(moved, math.Abs(x))
			for _, a := range as {
				// Row j += x·row i, then column j += x·column i.
				floats.AddScaled(a[j*d:(j+1)*d], x, a[i*d:(i+1)*d])
				blas64.Axpy(x, blas64.Vector{N: d, Inc: d, Data: a[i:]}, blas64.Vector{N: d, Inc: d, Data: a[j:]})
			}
			floats.AddScaled(xinv[j*d:(j+1)*d], x, xinv[i*d:(i+1)*d])
		}
	}
	return moved
}
