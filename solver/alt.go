package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// CP is an asymmetric rank-r decomposition T ≈ Σ_i W_i A_i⊗B_i⊗C_i with unit columns.
type CP struct {
	W       []float64
	A, B, C *mat.Dense
	// Iters is the mean number of power iterations a start needed to meet
	// Tol (capped starts count as the cap), as reported in [002] Table 1.
	Iters float64
	// Starts is the number of initialisations run; Found the number of
	// distinct components the clustering kept (may be < r).
	Starts, Found int
	// Converged is false when some start hit the iteration cap.
	Converged bool
}

// AltOptions tunes Alt beyond Options.
type AltOptions struct {
	// SameCos is the |cosine| in every mode above which a start is taken to
	// have found an already kept component (Proc. 2's threshold, which the
	// seed leaves unset). Default 0.8.
	SameCos float64
	// Residual runs that many sweeps of the coordinate-descent bias removal
	// ([002] Alg. 4) after clustering; 0 skips it.
	Residual int
	// Clip, when positive, is η₀ of Proc. 5: each factor update moves at most
	// η₀√k/d. 0 disables clipping (the exact update (12)).
	Clip float64
	// SVDInit replaces the random a⁽⁰⁾, b⁽⁰⁾ of every start by [002]
	// Procedure 3 (MATH §4.6): θ ~ N(0, I), and a⁽⁰⁾, b⁽⁰⁾ the top left and
	// right singular vectors of T(I,I,θ); c⁽⁰⁾ still comes from update (11).
	// Meant for k ≤ βd; T(I,I,θ) is formed from d2 contractions per start, so
	// implicit and sample tensors work. SVD starts begin near a component
	// (fewer iterations) but favour the components with large w_i, so the
	// smallest ones need more starts than with random initialisation.
	// Default false (random starts).
	SVDInit bool
}

// Alt runs the alternating asymmetric rank-1 power updates of [002] Alg. 1
// (MATH §4.6) on t: opt.Restarts random starts (default 10·r) run as one
// block, a and b uniform on the sphere (or [002] Proc. 3 when ao.SVDInit) and
// c = T(a,b,I)/‖·‖; each iteration applies the simultaneous update (11) to
// the whole block (three Contract calls) until every start moves less than opt.Tol (default 1e-8 in squared
// change) or opt.Iters (default 100) is reached. Procedure 2 then keeps r
// centres, largest |T(a,b,c)| first, each polished by opt.Iters more
// iterations, dropping starts that found an already kept component. Weights
// are made positive by flipping the sign of c. r may exceed every dimension
// (overcomplete) when the factors are incoherent.
func Alt(ctx context.Context, t Asym, r int, opt Options, ao AltOptions) (*CP, error) {
	if r < 1 {
		return nil, fmt.Errorf("alt: %w: rank %d < 1", ErrRank, r)
	}
	d1, d2, d3 := t.Dims()
	L := opt.Restarts
	if L <= 0 {
		L = 10 * r
	}
	n := opt.Iters
	if n <= 0 {
		n = 100
	}
	tol := opt.Tol
	if tol <= 0 {
		tol = 1e-8
	}
	if ao.SameCos <= 0 {
		ao.SameCos = 0.8
	}
	rng := newRNG(opt.Seed)
	a := mat.NewDense(d1, L, nil)
	b := mat.NewDense(d2, L, nil)
	c := mat.NewDense(d3, L, nil)
	if ao.SVDInit {
		if err := svdInit(ctx, t, a, b, rng); err != nil {
			return nil, err
		}
	} else {
		randomUnit(a, rng)
		randomUnit(b, rng)
	}
	if err := t.Contract(ctx, 2, c, a, b); err != nil {
		return nil, err
	}
	normalizeCols(c, nil)
	iters, ok, err := altPhase(ctx, t, a, b, c, n, tol)
	if err != nil {
		return nil, err
	}
	mean := 0.0
	for _, v := range iters {
		mean += float64(v)
	}
	cp := &CP{Iters: mean / float64(L), Starts: L, Converged: ok}
	w, err := cpValues(ctx, t, a, b, c)
	if err != nil {
		return nil, err
	}
	// Procedure 2: greedy clustering by |ŵ|.
	order := make([]int, L)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return math.Abs(w[order[i]]) > math.Abs(w[order[j]]) })
	keptA := mat.NewDense(d1, r, nil)
	keptB := mat.NewDense(d2, r, nil)
	keptC := mat.NewDense(d3, r, nil)
	var keptW []float64
	for _, s := range order {
		if len(keptW) == r {
			break
		}
		ca := mat.DenseCopyOf(a.Slice(0, d1, s, s+1))
		cb := mat.DenseCopyOf(b.Slice(0, d2, s, s+1))
		cc := mat.DenseCopyOf(c.Slice(0, d3, s, s+1))
		if _, ok1, err := altPhase(ctx, t, ca, cb, cc, n, tol); err != nil {
			return nil, err
		} else {
			cp.Converged = cp.Converged && ok1
		}
		dup := false
		for j := range keptW {
			if math.Abs(mat.Dot(ca.ColView(0), keptA.ColView(j))) > ao.SameCos &&
				math.Abs(mat.Dot(cb.ColView(0), keptB.ColView(j))) > ao.SameCos &&
				math.Abs(mat.Dot(cc.ColView(0), keptC.ColView(j))) > ao.SameCos {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		wv, err := cpValues(ctx, t, ca, cb, cc)
		if err != nil {
			return nil, err
		}
		j := len(keptW)
		keptA.Slice(0, d1, j, j+1).(*mat.Dense).Copy(ca)
		keptB.Slice(0, d2, j, j+1).(*mat.Dense).Copy(cb)
		keptC.Slice(0, d3, j, j+1).(*mat.Dense).Copy(cc)
		keptW = append(keptW, wv[0])
	}
	m := len(keptW)
	cp.Found = m
	if m == 0 {
		return nil, fmt.Errorf("alt: %w: no start produced a component", ErrDegenerate)
	}
	cp.A = mat.DenseCopyOf(keptA.Slice(0, d1, 0, m))
	cp.B = mat.DenseCopyOf(keptB.Slice(0, d2, 0, m))
	cp.C = mat.DenseCopyOf(keptC.Slice(0, d3, 0, m))
	cp.W = keptW
	if ao.Residual > 0 {
		if err := removeResidual(ctx, t, cp, ao.Residual, ao.Clip); err != nil {
			return nil, err
		}
	}
	for j, v := range cp.W {
		if v < 0 {
			cp.W[j] = -v
			for i := 0; i < d3; i++ {
				cp.C.Set(i, j, -cp.C.At(i, j))
			}
		}
	}
	if m < r {
		return cp, fmt.Errorf("alt: %w: found %d distinct components of %d with %d starts; use more restarts", ErrNoConvergence, m, r, L)
	}
	return cp, nil
}

// svdBlockCols bounds the columns of one Contract call in svdInit.
const svdBlockCols = 4096

// svdInit fills the columns of a and b by [002] Procedure 3: for each start,
// draw θ ~ N(0, I_{d3}), form M = T(I,I,θ) column by column (column j is
// T(I, e_j, θ), one mode-0 contraction) and take its top singular pair. When
// M is zero (θ orthogonal to every c_i) the start falls back to random unit
// vectors.
func svdInit(ctx context.Context, t Asym, a, b *mat.Dense, rng *rand.Rand) error {
	d1, d2, d3 := t.Dims()
	_, L := a.Dims()
	per := max(1, svdBlockCols/d2) // starts per Contract call
	for s0 := 0; s0 < L; s0 += per {
		s1 := min(L, s0+per)
		m := s1 - s0
		x := mat.NewDense(d2, m*d2, nil)
		y := mat.NewDense(d3, m*d2, nil)
		for s := 0; s < m; s++ {
			theta := make([]float64, d3)
			for i := range theta {
				theta[i] = rng.NormFloat64()
			}
			for j := 0; j < d2; j++ {
				x.Set(j, s*d2+j, 1)
				for i, v := range theta {
					y.Set(i, s*d2+j, v)
				}
			}
		}
		out := mat.NewDense(d1, m*d2, nil)
		if err := t.Contract(ctx, 0, out, x, y); err != nil {
			return err
		}
		var svd mat.SVD
		for s := 0; s < m; s++ {
			mt := out.Slice(0, d1, s*d2, (s+1)*d2)
			if !svd.Factorize(mt, mat.SVDThin) || svd.Values(nil)[0] == 0 {
				for i := 0; i < d1; i++ {
					a.Set(i, s0+s, rng.NormFloat64())
				}
				for i := 0; i < d2; i++ {
					b.Set(i, s0+s, rng.NormFloat64())
				}
				continue
			}
			var u, v mat.Dense
			svd.UTo(&u)
			svd.VTo(&v)
			for i := 0; i < d1; i++ {
				a.Set(i, s0+s, u.At(i, 0))
			}
			for i := 0; i < d2; i++ {
				b.Set(i, s0+s, v.At(i, 0))
			}
		}
	}
	normalizeCols(a, nil)
	normalizeCols(b, nil)
	return nil
}

// altPhase applies update (11) to every column until each moved less than
// tol (squared change summed over the three modes) or n iterations; it
// returns, per column, the iteration at which it first met tol.
func altPhase(ctx context.Context, t Asym, a, b, c *mat.Dense, n int, tol float64) ([]int, bool, error) {
	d1, L := a.Dims()
	d2, _ := b.Dims()
	d3, _ := c.Dims()
	na := mat.NewDense(d1, L, nil)
	nb := mat.NewDense(d2, L, nil)
	nc := mat.NewDense(d3, L, nil)
	done := make([]int, L)
	left := L
	for it := 1; it <= n && left > 0; it++ {
		if err := t.Contract(ctx, 0, na, b, c); err != nil {
			return nil, false, err
		}
		if err := t.Contract(ctx, 1, nb, a, c); err != nil {
			return nil, false, err
		}
		if err := t.Contract(ctx, 2, nc, a, b); err != nil {
			return nil, false, err
		}
		normalizeCols(na, nil)
		normalizeCols(nb, nil)
		normalizeCols(nc, nil)
		for j := 0; j < L; j++ {
			ch := colDistSq(na, a, j) + colDistSq(nb, b, j) + colDistSq(nc, c, j)
			if done[j] == 0 && ch <= tol {
				done[j] = it
				left--
			}
		}
		a.Copy(na)
		b.Copy(nb)
		c.Copy(nc)
	}
	for j := range done {
		if done[j] == 0 {
			done[j] = n
		}
	}
	return done, left == 0, nil
}

func colDistSq(x, y *mat.Dense, j int) float64 {
	r, _ := x.Dims()
	s := 0.0
	for i := 0; i < r; i++ {
		d := x.At(i, j) - y.At(i, j)
		s += d * d
	}
	return s
}

// cpValues returns T(a_j,b_j,c_j) for each column.
func cpValues(ctx context.Context, t Asym, a, b, c *mat.Dense) ([]float64, error) {
	d3, L := c.Dims()
	out := mat.NewDense(d3, L, nil)
	if err := t.Contract(ctx, 2, out, a, b); err != nil {
		return nil, err
	}
	w := make([]float64, L)
	ColDots(w, out, c)
	return w, nil
}

// removeResidual runs [002] Alg. 4: per mode, g_i = T(·) − Σ_{j≠i} w_j
// ⟨other factors⟩ X_j removes the non-orthogonality bias (update (12)), the
// true components being exact fixed points; with clip > 0 every column moves
// at most clip·√k/d per sweep (Proc. 5 step 3; the singular-value cap of
// step 2 is not applied, its constant is unreadable in the seed).
func removeResidual(ctx context.Context, t Asym, cp *CP, sweeps int, clip float64) error {
	facs := [3]*mat.Dense{cp.A, cp.B, cp.C}
	_, k := cp.A.Dims()
	for s := 0; s < sweeps; s++ {
		for _, mode := range []int{2, 0, 1} {
			x, y := facs[(mode+1)%3], facs[(mode+2)%3]
			if mode == 1 {
				x, y = facs[0], facs[2]
			}
			d, _ := facs[mode].Dims()
			g := mat.NewDense(d, k, nil)
			if err := t.Contract(ctx, mode, g, x, y); err != nil {
				return err
			}
			var gx, gy mat.Dense
			gx.Mul(x.T(), x)
			gy.Mul(y.T(), y)
			gx.MulElem(&gx, &gy)
			for i := 0; i < k; i++ {
				gx.Set(i, i, 0)
				for j := 0; j < k; j++ {
					gx.Set(j, i, gx.At(j, i)*cp.W[j])
				}
			}
			var bias mat.Dense
			bias.Mul(facs[mode], &gx)
			g.Sub(g, &bias)
			for i := 0; i < k; i++ {
				nrm := mat.Norm(g.ColView(i), 2)
				if nrm == 0 {
					continue
				}
				cp.W[i] = nrm
				step := math.Inf(1)
				if clip > 0 {
					step = clip * math.Sqrt(float64(k)) / float64(d)
				}
				moveTowards(facs[mode], g, i, 1/nrm, step)
			}
		}
	}
	return nil
}

// moveTowards sets column i of f to column i of g·scale, or moves it at most
// step towards that target.
func moveTowards(f, g *mat.Dense, i int, scale, step float64) {
	d, _ := f.Dims()
	dist := 0.0
	for p := 0; p < d; p++ {
		x := g.At(p, i)*scale - f.At(p, i)
		dist += x * x
	}
	dist = math.Sqrt(dist)
	frac := 1.0
	if dist > step {
		frac = step / dist
	}
	for p := 0; p < d; p++ {
		f.Set(p, i, f.At(p, i)+frac*(g.At(p, i)*scale-f.At(p, i)))
	}
}
