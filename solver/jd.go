package solver

import (
	"context"
	"fmt"
	"math"
	"sort"

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
	// NOJD also stops when off(A)/‖A‖² fell by less than stallRel (relative)
	// over the last stallWindow sweeps.
	stallWindow = 5
	stallRel    = 1e-6
)

// defaultProjections is L0 for the random first stage: the authors' code uses
// 5/10/20 projections for d < 100, < 200, ≥ 200 with Jacobi; QRJ1D needs more
// because its error depends on the spread of the projected eigenvalues, so it
// gets 2d.
func defaultProjections(d int, m JDMethod) int {
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

// JointDiag factors t by simultaneous diagonalisation of its projections
// ([003] Alg. 1, MATH §4.5): L0 = opt.Projections random unit projections
// T(I,I,w_l) are jointly diagonalised; with twoStage the inverse factors of
// that solution are used as plug-in projections and diagonalised again
// (OJD1/NOJD1, otherwise OJD0/NOJD0). When r < Dim the r columns with the
// largest diagonal energy Σ_l |D_l[i,i]|·‖x_i‖² are kept. Weights are the
// least-squares fit of the diagonals (MATH §4.5) and factors are flipped so
// every weight is positive (λ(−v)⊗3 = −λv⊗3).
//
// Slices come from t's Slicer or the Apply fallback, so implicit tensors
// work. opt.Iters caps sweeps per stage (default 100 for OJD, 1000 for
// NOJD), opt.Tol the largest rotation sine / triangular step that counts as
// movement (default 1e-10); NOJD also stops once the relative off-diagonal
// energy stalls (noisy or r < Dim input never meets Tol). Hitting the
// cap sets Converged = false but still returns the answer.
func JointDiag(ctx context.Context, t Tensor, r int, opt Options, method JDMethod, twoStage bool) (*Result, error) {
	d := t.Dim()
	name := method.name(twoStage)
	if r < 1 || r > d {
		return nil, fmt.Errorf("%s: %w: rank %d must be in [1, dim=%d] (joint diagonalisation of d×d slices finds at most d factors)", name, ErrRank, r, d)
	}
	l0 := opt.Projections
	if l0 <= 0 {
		l0 = defaultProjections(d, method)
	}
	if l0 < 2 {
		return nil, fmt.Errorf("%s: %w: need at least 2 projections, got %d", name, ErrDegenerate, l0)
	}
	rng := newRNG(opt.Seed)
	ws := mat.NewDense(d, l0, nil)
	randomUnit(ws, rng)
	res := &Result{Converged: true}
	u, xinv, full, pi, err := jdStage(ctx, t, r, ws, nil, opt, method, res, name)
	if err != nil {
		return nil, err
	}
	if twoStage {
		// Plug-in projections along the inverse factors ([003] Thm 2/4),
		// warm-started from the first stage's diagonaliser: the plug-in
		// matrices are then nearly diagonal and QRJ1D needs few sweeps.
		ws = mat.NewDense(d, r, nil)
		for i := 0; i < r; i++ {
			ws.SetCol(i, xinv[i])
		}
		normalizeCols(ws, nil)
		u, _, _, pi, err = jdStage(ctx, t, r, ws, full, opt, method, res, name)
		if err != nil {
			return nil, err
		}
	}
	res.finish(ctx, t, pi, u)
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

// jdStage jointly diagonalises T(I,I,w_l) for the columns of ws, starting
// from the diagonaliser x0 (X⁻¹, row-major d×d; nil for I), and returns the r
// selected unit factors (columns), their inverse factors (rows of X⁻¹), the
// full final X⁻¹ and the weights.
func jdStage(ctx context.Context, t Tensor, r int, ws *mat.Dense, x0 []float64, opt Options, method JDMethod, res *Result, name string) (u *mat.Dense, inv [][]float64, xinv []float64, pi []float64, err error) {
	d, l := ws.Dims()
	syms := make([]*mat.SymDense, l)
	for i := range syms {
		syms[i] = mat.NewSymDense(d, nil)
	}
	if err := Slices(ctx, t, syms, ws); err != nil {
		return nil, nil, nil, nil, err
	}
	// xinv accumulates X⁻¹ = B_T⋯B_1 (rows are inverse factors); M_l = X A_l Xᵀ.
	xinv = make([]float64, d*d)
	if x0 != nil {
		copy(xinv, x0)
	} else {
		for i := 0; i < d; i++ {
			xinv[i*d+i] = 1
		}
	}
	xi := mat.NewDense(d, d, xinv)
	total := 0.0
	as := make([][]float64, l)
	for i, s := range syms {
		a := make([]float64, d*d)
		if x0 != nil {
			var tmp mat.Dense
			tmp.Mul(xi, s)
			mat.NewDense(d, d, a).Mul(&tmp, xi.T())
		} else {
			for p := 0; p < d; p++ {
				for q := 0; q < d; q++ {
					a[p*d+q] = s.At(p, q)
				}
			}
		}
		as[i] = a
		total += symFrobSq(s)
	}
	if !(total > 0) {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w: every projection T(I,I,w) is zero", name, ErrDegenerate)
	}
	sweeps := opt.Iters
	if sweeps <= 0 {
		sweeps = defaultOJDSweeps
		if method == NonOrthogonal {
			sweeps = defaultNOJDSweeps
		}
	}
	tol := opt.Tol
	if tol <= 0 {
		tol = defaultJDTol
	}
	converged := false
	var hist []float64 // NOJD: relative off-diagonal energy after each sweep
	for sw := 0; sw < sweeps && !converged; sw++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, err
		}
		res.Iters++
		moved := jacobiSweep(as, xinv, d, tol)
		if method == NonOrthogonal {
			moved = math.Max(moved, triangularSweep(as, xinv, d))
			// On noisy or rank-deficient (r < d) input the triangular steps
			// keep moving inside the noise/null block without lowering the
			// objective, so |a| never reaches tol; stop once the relative
			// off-diagonal energy has stalled over the last stallWindow sweeps.
			off, all := offDiag(as, d)
			hist = append(hist, off/all)
			if n := len(hist); n > stallWindow && hist[n-1-stallWindow]-hist[n-1] <= stallRel*hist[n-1-stallWindow] {
				converged = true
			}
		}
		converged = converged || moved <= tol
	}
	res.Converged = res.Converged && converged
	off, _ := offDiag(as, d)
	// total is invariant only for orthogonal sweeps; the ratio is a guide.
	res.EigResidual = math.Sqrt(off / total)

	// X = (X⁻¹)⁻¹; orthogonal sweeps keep X⁻¹ orthogonal so this is exact.
	var x mat.Dense
	if err := x.Inverse(xi); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w: the joint diagonaliser is singular (%v); factors are not linearly independent", name, ErrDegenerate, err)
	}
	norms := colNorms(&x)
	// Scale-free diagonal energy of each column: Σ_l |D_l[i,i]|‖x_i‖² = Σ_l |π_i w_lᵀu_i|.
	energy := make([]float64, d)
	for i := 0; i < d; i++ {
		for _, a := range as {
			energy[i] += math.Abs(a[i*d+i]) * norms[i] * norms[i]
		}
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return energy[order[a]] > energy[order[b]] })
	if energy[order[r-1]] <= 1e-12*energy[order[0]] {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w: only %d of the requested %d components carry energy in the projections; lower the rank", name, ErrDegenerate, countAbove(energy, 1e-12*energy[order[0]]), r)
	}
	u = mat.NewDense(d, r, nil)
	inv = make([][]float64, r)
	pi = make([]float64, r)
	col := make([]float64, d)
	for c, i := range order[:r] {
		mat.Col(col, i, &x)
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
			num += a[i*d+i] * norms[i] * norms[i] * proj
			den += proj * proj
		}
		if den == 0 {
			return nil, nil, nil, nil, fmt.Errorf("%s: %w: factor %d is orthogonal to every projection", name, ErrDegenerate, c)
		}
		pi[c] = num / den
		if pi[c] < 0 {
			pi[c] = -pi[c]
			for p := range col {
				col[p] = -col[p]
			}
		}
		u.SetCol(c, col)
		inv[c] = append([]float64(nil), xinv[i*d:(i+1)*d]...)
	}
	return u, inv, xinv, pi, nil
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
// Cardoso–Souloumiac angle (MATH §4.5) to every matrix and to X⁻¹, and
// returns the largest |sin θ| used.
func jacobiSweep(as [][]float64, xinv []float64, d int, tol float64) float64 {
	moved := 0.0
	for p := 0; p < d-1; p++ {
		for q := p + 1; q < d; q++ {
			var g11, g12, g22 float64
			for _, a := range as {
				h1 := a[p*d+p] - a[q*d+q]
				h2 := a[p*d+q] + a[q*d+p]
				g11 += h1 * h1
				g12 += h1 * h2
				g22 += h2 * h2
			}
			// A'_pp − A'_qq = (cos2θ, sin2θ)·h, so 2θ is the angle of G's top eigenvector.
			theta := 0.25 * math.Atan2(2*g12, g11-g22)
			c, s := math.Cos(theta), math.Sin(theta)
			if math.Abs(s) <= tol {
				continue
			}
			moved = math.Max(moved, math.Abs(s))
			for _, a := range as {
				rotate(a, d, p, q, c, s)
			}
			rotateRows(xinv, d, p, q, c, s)
		}
	}
	return moved
}

// rotate sets a ← B a Bᵀ for the Givens B with B_pp = B_qq = c, B_pq = s, B_qp = −s.
func rotate(a []float64, d, p, q int, c, s float64) {
	rotateRows(a, d, p, q, c, s)
	for r := 0; r < d; r++ {
		x, y := a[r*d+p], a[r*d+q]
		a[r*d+p] = c*x + s*y
		a[r*d+q] = -s*x + c*y
	}
}

// rotateRows sets m ← B m for the same Givens B.
func rotateRows(m []float64, d, p, q int, c, s float64) {
	rp, rq := m[p*d:(p+1)*d], m[q*d:(q+1)*d]
	for r := range rp {
		x, y := rp[r], rq[r]
		rp[r] = c*x + s*y
		rq[r] = -s*x + c*y
	}
}

// triangularSweep applies the QRJ1D unit-triangular steps B = I + a e_j e_iᵀ
// for every ordered pair i ≠ j with the exact minimising a (MATH §4.5),
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
				for q := 0; q < d; q++ {
					if q != j {
						num += ri[q] * rj[q]
						den += ri[q] * ri[q]
					}
				}
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
				ri, rj := a[i*d:(i+1)*d], a[j*d:(j+1)*d]
				for q := range rj {
					rj[q] += x * ri[q]
				}
				for r := 0; r < d; r++ {
					a[r*d+j] += x * a[r*d+i]
				}
			}
			ri, rj := xinv[i*d:(i+1)*d], xinv[j*d:(j+1)*d]
			for q := range rj {
				rj[q] += x * ri[q]
			}
		}
	}
	return moved
}
