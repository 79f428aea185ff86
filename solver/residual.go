package solver

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"
)

// removeResidual runs [002] Alg. 4 (docs/MATH.md §4.6) in place on the unit factors
// f and positive weights w. With eta0 > 0 each factor matrix first moves to
// the minimum-spectral-norm matrix within η₀√k/d of it column by column
// (eq. (18)). Each sweep updates the last mode first, then modes 0, 1, …
// (C, A, B for third order): g_i = T(others_i) − Σ_{j≠i} w_j Π⟨·⟩ f_j (update
// (12), whose fixed points include the true components even when they are
// not orthogonal), w̃_i = ‖g_i‖, and Procedure 5 moves f towards g/w̃. The
// weights take the last mode's w̃, each moving at most ρ_w = η₀ w_max √k/d
// per sweep when eta0 > 0.
func removeResidual(ctx context.Context, t multilinear, w []float64, f []*mat.Dense, sweeps int, eta0, eta1 float64) error {
	p := len(f)
	_, k := f[0].Dims()
	dims := t.dims()
	dmin := dims[0]
	for _, d := range dims {
		dmin = min(dmin, d)
	}
	if eta0 > 0 {
		for m, x := range f {
			minNormStart(x, eta0*math.Sqrt(float64(k))/float64(dims[m]))
		}
	}
	order := append([]int{p - 1}, make([]int, p-1)...)
	for m := 1; m < p; m++ {
		order[m] = m - 1
	}
	wt := make([]float64, k)
	for s := 0; s < sweeps; s++ {
		for _, mode := range order {
			d := dims[mode]
			g := mat.NewDense(d, k, nil)
			if err := t.contract(ctx, mode, g, f); err != nil {
				return err
			}
			// Bias of the other components: column i of f[mode]·B with B_ji = w_j Π_{m≠mode}⟨f_mi, f_mj⟩, j ≠ i.
			b := gramProduct(f, mode)
			for i := 0; i < k; i++ {
				b.Set(i, i, 0)
				for j := 0; j < k; j++ {
					b.Set(j, i, b.At(j, i)*w[j])
				}
			}
			var bias mat.Dense
			bias.Mul(f[mode], b)
			g.Sub(g, &bias)
			for i := 0; i < k; i++ {
				wt[i] = mat.Norm(g.ColView(i), 2)
			}
			normalizeCols(g)
			proc5(f[mode], g, wt, eta0, eta1)
		}
		wmax := 0.0
		for _, v := range w {
			wmax = math.Max(wmax, v)
		}
		for i := range w {
			if wt[i] == 0 {
				continue // g_i vanished; keep the old factor and weight
			}
			step := wt[i] - w[i]
			if eta0 > 0 {
				rho := eta0 * wmax * math.Sqrt(float64(k)) / float64(dmin)
				step = math.Max(-rho, math.Min(rho, step))
			}
			w[i] += step
		}
	}
	return nil
}

// proc5 is [002] Procedure 5: cap the singular values of the target g (unit
// columns) at η₁·max(1, √(k/d)), then move every column of f towards it by at
// most η₀√k/d (all the way when eta0 = 0), and renormalise f's columns
// (the model keeps unit factors; the weights carry the scale). Columns whose
// g vanished (wt = 0) stay put.
func proc5(f, g *mat.Dense, wt []float64, eta0, eta1 float64) {
	d, k := f.Dims()
	q := g
	if eta1 > 0 {
		limit := eta1 * math.Max(1, math.Sqrt(float64(k)/float64(d)))
		var svd mat.SVD
		if svd.Factorize(g, mat.SVDThin) && svd.Values(nil)[0] > limit {
			vals := svd.Values(nil)
			var u, v mat.Dense
			svd.UTo(&u)
			svd.VTo(&v)
			for i := range vals {
				s := math.Min(vals[i], limit)
				for r := 0; r < d; r++ {
					u.Set(r, i, u.At(r, i)*s)
				}
			}
			q = new(mat.Dense)
			q.Mul(&u, v.T())
		}
	}
	step := math.Inf(1)
	if eta0 > 0 {
		step = eta0 * math.Sqrt(float64(k)) / float64(d)
	}
	for i := 0; i < k; i++ {
		if wt[i] == 0 {
			continue
		}
		moveTowards(f, q, i, step)
	}
	normalizeCols(f)
}

// moveTowards sets column i of f to column i of g, or moves it at most step
// towards it.
func moveTowards(f, g *mat.Dense, i int, step float64) {
	d, _ := f.Dims()
	dist := math.Sqrt(colDistSq(g, f, i))
	frac := 1.0
	if dist > step {
		frac = step / dist
	}
	for p := 0; p < d; p++ {
		f.Set(p, i, f.At(p, i)+frac*(g.At(p, i)-f.At(p, i)))
	}
}

// minNormIters is the number of projected subgradient steps of minNormStart.
const minNormIters = 30

// minNormStart replaces a (in place) by an approximate solution of [002]
// eq. (18), argmin ‖A‖₂ subject to ‖A_i − â_i‖ ≤ radius for every column:
// projected subgradient descent (the subgradient of ‖A‖₂ is u₁v₁ᵀ) with
// steps radius/√t, keeping the best iterate. It is convex, so this only
// trades accuracy for a fixed cost of minNormIters thin SVDs of d×k.
func minNormStart(a *mat.Dense, radius float64) {
	d, k := a.Dims()
	orig := mat.DenseCopyOf(a)
	best := mat.DenseCopyOf(a)
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return
	}
	bestNorm := svd.Values(nil)[0]
	var u, v mat.Dense
	for it := 1; it <= minNormIters; it++ {
		svd.UTo(&u)
		svd.VTo(&v)
		step := radius / math.Sqrt(float64(it))
		for j := 0; j < k; j++ {
			vj := v.At(j, 0)
			for i := 0; i < d; i++ {
				a.Set(i, j, a.At(i, j)-step*vj*u.At(i, 0))
			}
		}
		// Project every column back onto its ball around the original.
		for j := 0; j < k; j++ {
			dist := math.Sqrt(colDistSq(a, orig, j))
			if dist > radius {
				f := radius / dist
				for i := 0; i < d; i++ {
					a.Set(i, j, orig.At(i, j)+f*(a.At(i, j)-orig.At(i, j)))
				}
			}
		}
		if !svd.Factorize(a, mat.SVDThin) {
			break
		}
		if n := svd.Values(nil)[0]; n < bestNorm {
			bestNorm = n
			best.Copy(a)
		}
	}
	a.Copy(best)
}

// RemoveResidual runs ao.Residual sweeps of [002] Alg. 4 (with ao.Clip as
// η₀ and ao.Cap as η₁, docs/MATH.md §4.6) on a copy of cp, whatever produced it
// (Alt without Residual, JointDiagAsym, CPALS), and returns the copy with
// positive weights and its residual.
func RemoveResidual(ctx context.Context, t Asym, cp *CP, ao AltOptions) (*CP, error) {
	out := *cp
	out.W = append([]float64(nil), cp.W...)
	f := []*mat.Dense{mat.DenseCopyOf(cp.A), mat.DenseCopyOf(cp.B), mat.DenseCopyOf(cp.C)}
	flipPositive(out.W, f)
	if err := removeResidual(ctx, order3{t}, out.W, f, ao.Residual, ao.Clip, ao.Cap); err != nil {
		return nil, err
	}
	flipPositive(out.W, f)
	out.A, out.B, out.C = f[0], f[1], f[2]
	out.Residual = cpResidual(ctx, order3{t}, out.W, f)
	return &out, nil
}
