package solver

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Simultaneous defaults. A block converges in about as many iterations as
// one RTPM phase (the power map squares the ratios of the coordinates in the
// eigenbasis), so the caps match RTPM's.
const (
	// defaultBlocks is the number of independent random blocks: one block
	// already converges to all components of an orthogonally decomposable
	// tensor; a second guards against a column stuck between two components
	// under noise, for twice the work per contraction but no extra passes.
	defaultBlocks = 2
	// polishIters caps the unorthogonalised iterations after the selection;
	// they converge quadratically from a converged block.
	polishIters = 10
	// distinctCos is the largest |cos| between two selected components:
	// candidates closer than that to an accepted one are the same component
	// found by another block.
	distinctCos = 0.5
)

// Simultaneous finds r components of an orthogonally decomposable symmetric
// tensor (e.g. a whitened moment) by orthogonalised simultaneous power
// iteration (Wang and Lu 2017, "Tensor decomposition via simultaneous power
// iteration"), built so that every iteration costs ONE Apply for all
// components and all restarts: a tensor whose contraction is a pass over
// data on disk then needs about opt.Iters passes for the whole
// decomposition, where RTPM needs about r·(2·opt.Iters+2).
//
//  1. B = opt.Restarts independent blocks (default 2), each m = min(Dim,
//     r+⌈r/10⌉+2) random orthonormal columns, are iterated together: Θ ←
//     T(I,Θ,Θ) column by column (one Apply for all B·m columns), then each
//     block is re-orthonormalised by a QR factorisation. The QR deflates by
//     projection: column j of a block follows the power map on the
//     complement of columns 1..j−1, so a block converges to m distinct
//     components. Converged blocks leave the Apply; the phase stops when
//     every block moved less than opt.Tol (default 1e-10) or after
//     opt.Iters iterations (default 30).
//  2. One Apply evaluates every column: λ = T(θ,θ,θ). In memory, the
//     candidates are taken by decreasing λ, skipping those within
//     |cos| ≥ 0.5 of one already taken (the same component from another
//     block), until r are found; if that falls short, the block with the
//     largest Σλ² over its top r columns is used (for orthonormal columns
//     ‖T − Σλ v⊗3‖² = ‖T‖² − Σλ², so it is the best fit).
//  3. The r components are polished together without orthogonalisation
//     (θ ← T(I,θ,θ)/‖·‖, one Apply per iteration, at most 10, starting
//     from the contraction of step 2), which moves
//     each to the nearby eigenvector of the noisy tensor, as RTPM's final
//     iterations do; a column that would move to another component keeps
//     its value from step 2.
//
// Weights are λᵢ = T(vᵢ,vᵢ,vᵢ), largest first; EigResidual is
// maxᵢ ‖T(I,vᵢ,vᵢ) − λᵢvᵢ‖ on T itself (no deflation). Iters counts the
// Apply calls (passes, for a streamed tensor). A phase that hits its cap is
// reported in Converged/Reason. Fewer than r components with λ > 0 gives an
// error wrapping ErrNonPositive, with the components found.
func Simultaneous(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
	k := t.Dim()
	if err := whitenedRank("simultaneous", r, k); err != nil {
		return nil, err
	}
	blocks := opt.Restarts
	if blocks <= 0 {
		blocks = defaultBlocks
	}
	n, tol := opt.limits(defaultPowerIters, defaultTol)
	m := min(k, r+(r+9)/10+2)
	res := &Result{Converged: true, Restarts: blocks}
	theta := mat.NewDense(k, blocks*m, nil)
	randomUnit(theta, newRNG(opt.Seed))
	for b := range blocks {
		orthonormalize(theta.Slice(0, k, b*m, (b+1)*m).(*mat.Dense), nil, 0)
	}
	if err := simultaneousPhase(ctx, t, theta, m, r, n, tol, res); err != nil {
		return nil, err
	}
	out := mat.NewDense(k, blocks*m, nil)
	if err := t.Apply(ctx, out, theta); err != nil {
		return nil, err
	}
	res.Iters++
	lam, eres := eigenPairs(out, theta)
	pick := selectDistinct(theta, lam, eres, r)
	if len(pick) < r {
		pick = bestBlock(lam, blocks, m, r)
	}
	v := mat.NewDense(k, len(pick), nil)
	vout := mat.NewDense(k, len(pick), nil)
	for c, j := range pick {
		v.ColView(c).(*mat.VecDense).CopyVec(theta.ColView(j))
		vout.ColView(c).(*mat.VecDense).CopyVec(out.ColView(j))
	}
	w, eres, failed, err := polishBlock(ctx, t, v, vout, tol, res)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(w))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(w[a], w[b]) })
	var lambdas []float64
	found := mat.NewDense(k, r, nil)
	taken := make([]bool, len(w))
	for _, j := range order {
		if failed[j] || !(w[j] > zeroEig*firstOr(lambdas, w[j])) || math.IsInf(w[j], 0) || !isEigen(w[j], eres[j]) {
			continue
		}
		found.ColView(len(lambdas)).(*mat.VecDense).CopyVec(v.ColView(j))
		lambdas = append(lambdas, w[j])
		taken[j] = true
		res.EigResidual = math.Max(res.EigResidual, eres[j])
	}
	if len(lambdas) < r && !res.Converged && len(lambdas) > 0 {
		lambdas = unsettled(v, w, taken, theta, lam, found, lambdas, r, res)
	}
	if len(lambdas) < r {
		var got *mat.Dense
		if len(lambdas) > 0 {
			got = found.Slice(0, k, 0, len(lambdas)).(*mat.Dense)
		}
		res.finish(ctx, t, lambdas, got)
		if !res.Converged {
			return res, fmt.Errorf("simultaneous: %w: only %d of %d components are eigenvectors with a positive eigenvalue, and %s", ErrNoConvergence, len(lambdas), r, res.Reason)
		}
		return res, fmt.Errorf("simultaneous: %w: only %d of %d components are eigenvectors with a positive eigenvalue; the tensor supports fewer components, lower the rank", ErrNonPositive, len(lambdas), r)
	}
	res.finish(ctx, t, lambdas, found)
	return res, nil
}

// unsettled completes, for a solve whose iterations hit their cap (a tensor
// far from orthogonally decomposable, such as the moments of real text),
// the components found (the first len(lambdas) columns of found) with
// columns that are not eigenvectors: the polished columns of v not taken
// (w their λ), then the columns of the last block iteration theta (lam
// theirs), largest |λ| first within each, each distinct from those taken
// (|cos| < distinctCos), with |λ| above rounding noise, and a negative λ
// used as (−λ, −θ), the same term. Their answer is used, as RTPM uses an
// unsettled start, and res.Reason says how many; an exhausted tensor (|λ|
// at rounding level) still falls short. It returns the weights, largest
// first, with found reordered to match.
func unsettled(v *mat.Dense, w []float64, taken []bool, theta *mat.Dense, lam []float64, found *mat.Dense, lambdas []float64, r int, res *Result) []float64 {
	k, _ := v.Dims()
	type comp struct {
		lam float64
		col *mat.VecDense
	}
	comps := make([]comp, len(lambdas))
	for i, l := range lambdas {
		comps[i] = comp{l, mat.VecDenseCopyOf(found.ColView(i))}
	}
	added := 0
	for pass, cand := range []*mat.Dense{v, theta} {
		vals := w
		if pass == 1 {
			vals = lam
		}
		order := make([]int, len(vals))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(math.Abs(vals[a]), math.Abs(vals[b])) })
		for _, j := range order {
			if len(comps) == r {
				break
			}
			l := math.Abs(vals[j])
			if (pass == 0 && taken[j]) || !(l > zeroEig*lambdas[0]) || math.IsInf(l, 0) {
				continue
			}
			col := mat.VecDenseCopyOf(cand.ColView(j))
			if vals[j] < 0 {
				col.ScaleVec(-1, col)
			}
			distinct := true
			for _, c := range comps {
				if math.Abs(mat.Dot(col, c.col)) >= distinctCos {
					distinct = false
					break
				}
			}
			if distinct {
				comps = append(comps, comp{l, col})
				added++
			}
		}
	}
	slices.SortStableFunc(comps, func(a, b comp) int { return -cmpFloat(a.lam, b.lam) })
	out := make([]float64, len(comps))
	for i, c := range comps {
		out[i] = c.lam
		found.Slice(0, k, i, i+1).(*mat.Dense).ColView(0).(*mat.VecDense).CopyVec(c.col)
	}
	if added > 0 {
		res.Unsettled = added
		res.Reason += fmt.Sprintf("; %d of the %d components are not eigenvectors (used as found)", added, r)
	}
	return out
}

// simultaneousPhase runs up to n iterations of Θ_b ← qr(T(I,Θ_b,Θ_b)) on
// the blocks of m columns of theta, in place, contracting the blocks that
// have not converged in one Apply per iteration. A block has converged when
// its first r columns moved less than tol: the columns beyond them only
// give the r-th room to settle (as in subspace iteration) and wander in
// the tensor's null space when its rank is r.
func simultaneousPhase(ctx context.Context, t Tensor, theta *mat.Dense, m, r, n int, tol float64, res *Result) error {
	k, c := theta.Dims()
	active := make([]int, c/m)
	for b := range active {
		active[b] = b
	}
	for it := 1; it <= n && len(active) > 0; it++ {
		in := mat.NewDense(k, len(active)*m, nil)
		for i, b := range active {
			in.Slice(0, k, i*m, (i+1)*m).(*mat.Dense).Copy(theta.Slice(0, k, b*m, (b+1)*m))
		}
		out := mat.NewDense(k, len(active)*m, nil)
		if err := t.Apply(ctx, out, in); err != nil {
			return err
		}
		res.Iters++
		next := active[:0]
		for i, b := range active {
			blk := theta.Slice(0, k, b*m, (b+1)*m).(*mat.Dense)
			q := out.Slice(0, k, i*m, (i+1)*m).(*mat.Dense)
			change := orthonormalize(q, blk, r)
			blk.Copy(q)
			if change >= tol {
				next = append(next, b)
			}
		}
		active = next
		if it == n && len(active) > 0 {
			res.Converged = false
			res.Reason = fmt.Sprintf("simultaneous: %d of %d blocks did not settle within %d iterations (tol %.3g); the tensor may not be orthogonally decomposable at this noise level", len(active), c/m, n, tol)
		}
	}
	return nil
}

// orthonormalize replaces the columns of a (k×m, m ≤ k) by the Q of their
// QR factorisation, each column signed like the column it came from (R's
// diagonal made positive), and returns the largest change of its first r
// columns against prev (if non-nil), ignoring columns whose R diagonal is
// zero up to rounding (≤ zeroEig of the largest: a null space of the
// tensor, where a column has nothing to settle on). Gram–Schmidt order is
// column order, so column j is column j of a with its components along
// columns 1..j−1 removed.
func orthonormalize(a, prev *mat.Dense, r int) float64 {
	k, m := a.Dims()
	var qr mat.QR
	qr.Factorize(a)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	rmax := 0.0
	for j := range m {
		rmax = math.Max(rmax, math.Abs(rr.At(j, j)))
	}
	change := 0.0
	for j := range m {
		s := 1.0
		if rr.At(j, j) < 0 {
			s = -1
		}
		d := 0.0
		for i := range k {
			x := s * q.At(i, j)
			if prev != nil {
				e := x - prev.At(i, j)
				d += e * e
			}
			a.Set(i, j, x)
		}
		if j < r && math.Abs(rr.At(j, j)) > zeroEig*rmax {
			change = math.Max(change, math.Sqrt(d))
		}
	}
	return change
}

// eigenPairs returns, per column θ of theta with out = T(I,θ,θ), the
// Rayleigh value λ = θᵀT(I,θ,θ) and the eigen-residual ‖T(I,θ,θ) − λθ‖.
func eigenPairs(out, theta *mat.Dense) (lam, eres []float64) {
	_, c := theta.Dims()
	lam, eres = make([]float64, c), make([]float64, c)
	ColDots(lam, out, theta)
	var d mat.VecDense
	for j := range c {
		d.AddScaledVec(out.ColView(j), -lam[j], theta.ColView(j))
		eres[j] = mat.Norm(&d, 2)
	}
	return lam, eres
}

// isEigen reports whether a column with Rayleigh value lam and
// eigen-residual eres is an approximate eigenvector with λ > 0 (unconverged
// columns and columns in the tensor's null space are not).
func isEigen(lam, eres float64) bool { return lam > 0 && eres <= maxEigResidual*lam }

// maxEigResidual is the largest eigen-residual, relative to λ, of a column
// taken as a component.
const maxEigResidual = 0.5

// selectDistinct returns up to r columns of theta, largest λ first, none
// within |cos| ≥ distinctCos of another: first among the approximate
// eigenvectors (isEigen), then, if that falls short, among the other
// columns with λ > 0.
func selectDistinct(theta *mat.Dense, lam, eres []float64, r int) []int {
	order := make([]int, len(lam))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(lam[a], lam[b]) })
	var pick []int
	taken := make([]bool, len(lam))
	for _, eigenOnly := range []bool{true, false} {
		for _, j := range order {
			if len(pick) == r {
				return pick
			}
			if taken[j] || !(lam[j] > 0) || (eigenOnly && !isEigen(lam[j], eres[j])) {
				continue
			}
			distinct := true
			for _, p := range pick {
				if math.Abs(mat.Dot(theta.ColView(j), theta.ColView(p))) >= distinctCos {
					distinct = false
					break
				}
			}
			if distinct {
				pick = append(pick, j)
				taken[j] = true
			}
		}
	}
	return pick
}

// bestBlock returns the r columns of largest λ of the block (of m columns)
// whose top r columns have the largest Σλ².
func bestBlock(lam []float64, blocks, m, r int) []int {
	bestScore := math.Inf(-1)
	var bestCols []int
	for b := range blocks {
		cols := make([]int, m)
		for i := range cols {
			cols[i] = b*m + i
		}
		slices.SortStableFunc(cols, func(x, y int) int { return -cmpFloat(lam[x], lam[y]) })
		score := 0.0
		for _, c := range cols[:r] {
			score += lam[c] * lam[c]
		}
		if score > bestScore {
			bestScore, bestCols = score, cols[:r]
		}
	}
	return bestCols
}

// polishBlock runs up to polishIters unorthogonalised power iterations on
// the columns of v together (one Apply each), from out = T(I,v,v) already
// computed. A column that comes within |cos| ≥ distinctCos of an earlier
// one is converging to the same component: it is marked failed and keeps
// its last distinct value. It returns λ = T(θ,θ,θ) and ‖T(I,θ,θ) − λθ‖ per
// column at the final v.
func polishBlock(ctx context.Context, t Tensor, v, out *mat.Dense, tol float64, res *Result) (lam, eres []float64, failed []bool, err error) {
	k, r := v.Dims()
	prev := mat.NewDense(k, r, nil)
	lam, eres = eigenPairs(out, v)
	settled := false
	failed = make([]bool, r)
	for it := 0; it < polishIters && !settled; it++ {
		prev.Copy(v)
		v.Copy(out)
		normalizeCols(v)
		change := keepDistinct(v, prev, failed)
		if err := t.Apply(ctx, out, v); err != nil {
			return nil, nil, nil, err
		}
		res.Iters++
		lam, eres = eigenPairs(out, v)
		settled = change < tol
	}
	if !settled && res.Converged {
		res.Converged = false
		res.Reason = fmt.Sprintf("simultaneous: the final polish did not settle within %d iterations (tol %.3g)", polishIters, tol)
	}
	return lam, eres, failed, nil
}

// keepDistinct restores the previous value of every failed column of v and
// of every column that came within |cos| ≥ distinctCos of an earlier
// column that has not failed (marking it failed), and returns the largest
// change of the other columns against prev.
func keepDistinct(v, prev *mat.Dense, failed []bool) float64 {
	k, r := v.Dims()
	change := 0.0
	for j := range r {
		for i := 0; i < j && !failed[j]; i++ {
			if !failed[i] && math.Abs(mat.Dot(v.ColView(j), v.ColView(i))) >= distinctCos {
				failed[j] = true
			}
		}
		if failed[j] {
			v.ColView(j).(*mat.VecDense).CopyVec(prev.ColView(j))
			continue
		}
		d := 0.0
		for i := range k {
			e := v.At(i, j) - prev.At(i, j)
			d += e * e
		}
		change = math.Max(change, math.Sqrt(d))
	}
	return change
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
