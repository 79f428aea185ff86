package solver

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// RTPM defaults (docs/MATH.md §4.2). Quadratic convergence makes a few dozen
// iterations plenty once a start is in a basin; Tol usually ends a phase in ~10.
const (
	defaultPowerIters = 30
	defaultTol        = 1e-10
)

// defaultRestarts is L = max(20, k): Thm 5.1 asks for L nearly linear in k.
func defaultRestarts(k int) int { return max(20, k) }

// RTPM runs the robust tensor power method of [004] Alg. 1 (docs/MATH.md §4.2) and
// returns r eigenpairs of t, largest T(v,v,v) first.
//
// For each component, L = opt.Restarts random unit starts (default max(20,k))
// run as one k×L block, so each of the N = opt.Iters (default 30) iterations
// is a single Apply call; a phase stops early once every column moved less
// than opt.Tol (default 1e-10). The start with the largest signed T(θ,θ,θ)
// gets N more iterations, λ = T(θ,θ,θ), and the component is deflated
// implicitly (never rebuilding t). The method needs an orthogonally
// decomposable tensor (e.g. whitened), so r ≤ Dim.
//
// A component that comes out with λ < 0 (a start that did not settle) is
// the same term as (−λ, −θ) and is used so. If one comes out with
// |λ| ≤ 1e-10·λ₁ (zero up to rounding: the tensor supports fewer than r
// components) the components found so far are returned with an error
// wrapping ErrNonPositive.
func RTPM(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
	k := t.Dim()
	if err := whitenedRank("rtpm", r, k); err != nil {
		return nil, err
	}
	L := opt.Restarts
	if L <= 0 {
		L = defaultRestarts(k)
	}
	n, tol := opt.limits(defaultPowerIters, defaultTol)
	rng := newRNG(opt.Seed)
	res := &Result{Converged: true}
	found := mat.NewDense(k, r, nil)
	var lambdas []float64
	theta := mat.NewDense(k, L, nil)
	vals := make([]float64, L)
	for c := 0; c < r; c++ {
		var v *mat.Dense
		if c > 0 {
			v = found.Slice(0, k, 0, c).(*mat.Dense)
		}
		defl := Deflate(t, lambdas, v)
		randomUnit(theta, rng)
		res.Restarts += L
		it, _, err := powerPhase(ctx, defl, theta, n, tol)
		res.Iters += it
		if err != nil {
			return nil, err
		}
		if err := Cubic(ctx, defl, vals, theta); err != nil {
			return nil, err
		}
		best := argmax(vals)
		th := mat.NewDense(k, 1, nil)
		th.Copy(theta.Slice(0, k, best, best+1))
		lam, eres, it, ok, err := polish(ctx, defl, th, n, tol)
		res.Iters += it
		res.notePolish(ok, "rtpm", c, n, tol)
		if err != nil {
			return nil, err
		}
		if lam < 0 {
			// λ·θ⊗θ⊗θ = (−λ)·(−θ)⊗3: a start that did not settle (a tensor
			// far from orthogonally decomposable, such as the moments of real
			// text) can end at a negative Rayleigh value, and the same term
			// with a positive weight is used.
			lam = -lam
			th.Scale(-1, th)
		}
		if !(lam > zeroEig*firstOr(lambdas, lam)) || math.IsInf(lam, 0) {
			res.finish(ctx, t, lambdas, v)
			return res, fmt.Errorf("rtpm: %w: component %d of %d has eigenvalue %.3g; the tensor supports fewer components, lower the rank", ErrNonPositive, c+1, r, lam)
		}
		res.EigResidual = math.Max(res.EigResidual, eres)
		lambdas = append(lambdas, lam)
		found.Slice(0, k, c, c+1).(*mat.Dense).Copy(th)
	}
	res.finish(ctx, t, lambdas, found)
	return res, nil
}

// powerPhase runs up to n block iterations θ ← T(I,θ,θ)/‖·‖ in place and
// reports the column iterations done (Σ over iterations of the columns
// moved) and whether every column met tol. A column that moved less than
// tol is settled and leaves the block: the others are contracted without
// it. A phase lasts until its slowest start settles, while most starts
// settle in a few iterations (quadratic convergence in a basin); carrying
// them along was a third of RTPM's column contractions (corpus M, k=50),
// for moves below tol.
func powerPhase(ctx context.Context, t Tensor, theta *mat.Dense, n int, tol float64) (int, bool, error) {
	k, L := theta.Dims()
	active := make([]int, L) // columns of theta not yet settled
	for j := range active {
		active[j] = j
	}
	cols := 0
	in, out := mat.NewDense(k, L, nil), mat.NewDense(k, L, nil)
	var d mat.VecDense
	for it := 1; it <= n; it++ {
		a := len(active)
		x, y := in.Slice(0, k, 0, a).(*mat.Dense), out.Slice(0, k, 0, a).(*mat.Dense)
		for c, j := range active {
			x.ColView(c).(*mat.VecDense).CopyVec(theta.ColView(j))
		}
		if err := t.Apply(ctx, y, x); err != nil {
			return cols, false, err
		}
		cols += a
		normalizeCols(y)
		kept := active[:0]
		for c, j := range active {
			d.SubVec(y.ColView(c), x.ColView(c))
			theta.ColView(j).(*mat.VecDense).CopyVec(y.ColView(c))
			if !(mat.Norm(&d, 2) < tol) { // NaN stays: it never settles
				kept = append(kept, j)
			}
		}
		if active = kept; len(active) == 0 {
			return cols, true, nil
		}
	}
	return cols, false, nil
}

// notePolish records a polish phase that missed tol for component c.
func (res *Result) notePolish(ok bool, name string, c, n int, tol float64) {
	if ok || !res.Converged {
		return
	}
	res.Converged = false
	res.Reason = fmt.Sprintf("%s: component %d: the power iteration did not settle within %d iterations (tol %.3g); the tensor may not be orthogonally decomposable at this noise level", name, c+1, n, tol)
}

// polish runs n more iterations on one column and returns λ = T(θ,θ,θ) and
// the eigen-residual ‖T(I,θ,θ) − λθ‖ at the final θ.
func polish(ctx context.Context, t Tensor, th *mat.Dense, n int, tol float64) (lam, eres float64, iters int, ok bool, err error) {
	iters, ok, err = powerPhase(ctx, t, th, n, tol)
	if err != nil {
		return 0, 0, iters, ok, err
	}
	k, _ := th.Dims()
	out := mat.NewDense(k, 1, nil)
	if err := t.Apply(ctx, out, th); err != nil {
		return 0, 0, iters, ok, err
	}
	lam = mat.Dot(out.ColView(0), th.ColView(0))
	var d mat.VecDense
	d.AddScaledVec(out.ColView(0), -lam, th.ColView(0))
	return lam, mat.Norm(&d, 2), iters, ok, nil
}

// zeroEig is the eigenvalue, relative to the first, below which a component
// is rounding noise of an exhausted tensor.
const zeroEig = 1e-10

func firstOr(x []float64, v float64) float64 {
	if len(x) > 0 {
		return x[0]
	}
	return math.Abs(v)
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] || math.IsNaN(x[best]) {
			best = i
		}
	}
	return best
}

// finish stores the components and, when t's norm is cheap, the relative
// Frobenius residual.
func (res *Result) finish(ctx context.Context, t Tensor, w []float64, v *mat.Dense) {
	res.Weights = append([]float64(nil), w...)
	if v == nil || len(w) == 0 {
		res.Factors = nil
		res.Residual = math.NaN()
		return
	}
	_, c := v.Dims()
	res.Factors = mat.DenseCopyOf(v.Slice(0, v.RawMatrix().Rows, 0, min(c, len(w))))
	res.Residual = relResidual(ctx, t, res.Weights, res.Factors)
}

// relResidual is ‖T − Σλ v⊗3‖_F/‖T‖_F, or NaN if t is not a Normer.
func relResidual(ctx context.Context, t Tensor, w []float64, v *mat.Dense) float64 {
	nm, ok := t.(Normer)
	if !ok {
		return math.NaN()
	}
	base := nm.FrobeniusSq()
	r, err := residualTerms(ctx, t, w, v)
	if err != nil || base == 0 {
		return math.NaN()
	}
	return math.Sqrt(math.Max(base+r, 0) / base)
}
