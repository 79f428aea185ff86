package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// viewsOf builds noiseless three-view samples in which component h appears
// counts[h] times, so T = Σ_h (counts[h]/n) a_h⊗b_h⊗c_h exactly.
func viewsOf(a, b, c *mat.Dense, counts []int) SampleTensor {
	d, _ := a.Dims()
	n := 0
	for _, m := range counts {
		n += m
	}
	x1, x2, x3 := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
	l := 0
	for h, m := range counts {
		for ; m > 0; m-- {
			for i := 0; i < d; i++ {
				x1.Set(l, i, a.At(i, h))
				x2.Set(l, i, b.At(i, h))
				x3.Set(l, i, c.At(i, h))
			}
			l++
		}
	}
	return SampleTensor{DenseViews{X1: x1, X2: x2, X3: x3}}
}

// With orthonormal A and B, T(I,I,θ) = A diag(w_i⟨θ,c_i⟩) Bᵀ, so Procedure 3
// must return exactly the pair (a_i, b_i) with the largest |w_i⟨θ,c_i⟩|.
func TestSVDInitOrthogonal(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(40, 41))
	d, k, L := 9, 4, 6
	a, b, c := orthoFactors(d, k, rng), orthoFactors(d, k, rng), unitFactors(d, k, rng)
	counts := []int{1, 2, 3, 4}
	st := viewsOf(a, b, c, counts)
	f := []*mat.Dense{mat.NewDense(d, L, nil), mat.NewDense(d, L, nil), mat.NewDense(d, L, nil)}
	thetas, err := svdInit(ctx, order3{st}, f, newRNG(7))
	if err != nil {
		t.Fatal(err)
	}
	a0, b0 := f[0], f[1]
	for s := 0; s < L; s++ {
		theta := mat.Col(nil, s, thetas[2])
		best, bv := -1, -1.0
		for i := 0; i < k; i++ {
			dot := 0.0
			for p := 0; p < d; p++ {
				dot += theta[p] * c.At(p, i)
			}
			if v := math.Abs(float64(counts[i]) * dot); v > bv {
				best, bv = i, v
			}
		}
		ca := math.Abs(mat.Dot(a0.ColView(s), a.ColView(best)))
		cb := math.Abs(mat.Dot(b0.ColView(s), b.ColView(best)))
		if math.Abs(ca-1) > 1e-10 || math.Abs(cb-1) > 1e-10 {
			t.Fatalf("start %d: |cos| %v, %v with component %d", s, ca, cb, best)
		}
	}
}

// On non-orthogonal factors (k ≤ d) Alt with Proc. 3 starts recovers every
// component, deterministically, and its starts need fewer iterations than
// random ones. d = 40 keeps the random factors incoherent enough (at d = 20
// some pairs have |cos| > 0.5 and the true factors stop being attracting
// fixed points of the rank-1 updates, whatever the initialisation).
func TestAltSVDInit(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, 43))
	d, k := 40, 5
	a, b, c := unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)
	counts := []int{10, 12, 14, 16, 18}
	st := viewsOf(a, b, c, counts)
	opt := Options{Seed: 3, Restarts: 100}
	cp, err := Alt(ctx, st, k, opt, AltOptions{SVDInit: true, Residual: 20})
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]*mat.Dense{"a": {a, cp.A}, "b": {b, cp.B}, "c": {c, cp.C}} {
		_, dist := MatchColumns(pair[0], pair[1])
		for i, x := range dist {
			if !(x < 1e-3) {
				t.Fatalf("view %s factor %d distance %v", name, i, x)
			}
		}
	}
	again, err := Alt(ctx, st, k, opt, AltOptions{SVDInit: true, Residual: 20})
	if err != nil || !mat.Equal(cp.A, again.A) {
		t.Fatalf("SVD-initialised Alt is not deterministic (%v)", err)
	}
	rnd, err := Alt(ctx, st, k, opt, AltOptions{Residual: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !(cp.Iters < rnd.Iters) {
		t.Fatalf("SVD starts took %.2f iterations on average, random %.2f", cp.Iters, rnd.Iters)
	}
	t.Logf("mean iterations per start: SVD %.2f, random %.2f", cp.Iters, rnd.Iters)
}
