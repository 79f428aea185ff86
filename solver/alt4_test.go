package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkFactors fails when any true column is further than tol from its match.
func checkFactors(t *testing.T, name string, truth, est []*mat.Dense, tol float64) {
	t.Helper()
	for m := range truth {
		match, dist := MatchColumns(truth[m], est[m])
		for i, x := range dist {
			if match[i] < 0 || !(x < tol) {
				t.Fatalf("%s: mode %d factor %d distance %.3g > %.3g", name, m, i, x, tol)
			}
		}
	}
}

func TestAlt4KnownFactors(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(70, 71))
	d, k := 12, 4
	f := []*mat.Dense{unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)}
	w := []float64{1, 1.3, 1.6, 2}
	T := Dense4FromCP(w, f[0], f[1], f[2], f[3])
	for _, svd := range []bool{false, true} {
		ao := DefaultAltOptions()
		ao.SVDInit = svd
		cp, err := Alt4(ctx, T, k, Options{Seed: 5}, ao)
		if err != nil {
			t.Fatalf("svd=%v: %v", svd, err)
		}
		// Exact tensor: Alg. 4 removes the non-orthogonality bias of the
		// rank-1 updates; what is left is its linear convergence over 20 sweeps.
		checkFactors(t, "alt4 noiseless", f, cp.Factors[:], 1e-6)
		match, _ := MatchColumns(f[0], cp.Factors[0])
		for i, j := range match {
			if math.Abs(cp.W[j]-w[i]) > 1e-6 {
				t.Fatalf("weight %d: %v want %v", i, cp.W[j], w[i])
			}
		}
		if !(cp.Residual < 1e-6) || !cp.Converged {
			t.Fatalf("residual %v converged %v (%s)", cp.Residual, cp.Converged, cp.Reason)
		}
	}
	// Sample form with view noise: x_v = f_v(h) + ζ·noise, the fourth
	// moment of independent noise adds nothing in expectation.
	n := 8000
	all := mat.NewDense(n, 4*d, nil)
	for l := 0; l < n; l++ {
		h := l % k
		for m := 0; m < 4; m++ {
			for i := 0; i < d; i++ {
				all.Set(l, m*d+i, f[m].At(i, h)+0.02*rng.NormFloat64())
			}
		}
	}
	st := SampleTensor4{RowViews4{D1: d, D2: d, D3: d, D4: d, Pass: MemoryPass(all, 1000)}}
	cp, err := Alt4(ctx, st, k, Options{Seed: 6}, DefaultAltOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Sampling error of a 4th moment with ζ = 0.02 and 2000 rows per component.
	checkFactors(t, "alt4 samples", f, cp.Factors[:], 0.01)
	for _, x := range cp.W {
		if math.Abs(x-0.25) > 0.01 {
			t.Fatalf("weights %v, want 1/4 each", cp.W)
		}
	}
	if !math.IsNaN(cp.Residual) {
		t.Fatalf("sample tensors do not know their norm, residual %v", cp.Residual)
	}
}

// Procedure 3 in fourth order: with orthonormal A and B, T(I,I,θ,θ) =
// A diag(w_i⟨θ,c_i⟩⟨θ,d_i⟩) Bᵀ, so the start is exactly the pair with the
// largest |w_i⟨θ,c_i⟩⟨θ,d_i⟩|.
func TestSVDInitFourthOrder(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(72, 73))
	d, k, L := 7, 3, 5
	a, b, c, e := orthoFactors(d, k, rng), orthoFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)
	w := []float64{1, 2, 3}
	T := order4{Dense4FromCP(w, a, b, c, e)}
	f := []*mat.Dense{mat.NewDense(d, L, nil), mat.NewDense(d, L, nil), mat.NewDense(d, L, nil), mat.NewDense(d, L, nil)}
	thetas, err := svdInit(ctx, T, f, newRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	if thetas[3] != thetas[2] {
		t.Fatal("equal last dimensions must share θ (T(I,I,θ,θ))")
	}
	for s := 0; s < L; s++ {
		th := thetas[2].ColView(s)
		best, bv := -1, -1.0
		for i := 0; i < k; i++ {
			if v := math.Abs(w[i] * mat.Dot(th, c.ColView(i)) * mat.Dot(th, e.ColView(i))); v > bv {
				best, bv = i, v
			}
		}
		ca := math.Abs(mat.Dot(f[0].ColView(s), a.ColView(best)))
		cb := math.Abs(mat.Dot(f[1].ColView(s), b.ColView(best)))
		if math.Abs(ca-1) > 1e-10 || math.Abs(cb-1) > 1e-10 {
			t.Fatalf("start %d: |cos| %v, %v with component %d", s, ca, cb, best)
		}
	}
}
