package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// meanDist is the mean matched distance over the modes and columns.
func meanDist(truth, est []*mat.Dense) float64 {
	s, n := 0.0, 0
	for m := range truth {
		_, dist := MatchColumns(truth[m], est[m])
		for _, x := range dist {
			s += x
			n++
		}
	}
	return s / float64(n)
}

// Alg. 4 removes the non-orthogonality bias of the rank-1 updates: on a
// noisy non-orthogonal tensor the error with it is a fraction of the error
// without (the bias Σ_{j≠i} w_j⟨a_i,a_j⟩⟨b_i,b_j⟩c_j is about √k/d here,
// far above the noise).
func TestAlg4ReducesBias(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(80, 81))
	d, k := 20, 6
	f := []*mat.Dense{unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)}
	w := make([]float64, k)
	for i := range w {
		w[i] = 1 + rng.Float64()
	}
	T := Dense3FromCP(w, f[0], f[1], f[2])
	noise := randDenseN([]int{d, d, d}, rng)
	eps := 0.01 / math.Sqrt(sumSq(noise)) // ‖E‖_F = 0.01
	for i := range T.Data {
		T.Data[i] += eps * noise[i]
	}
	base := DefaultAltOptions()
	base.Residual = 0
	without, err := Alt(ctx, T, k, Options{Seed: 1}, base)
	if err != nil {
		t.Fatal(err)
	}
	with, err := Alt(ctx, T, k, Options{Seed: 1}, DefaultAltOptions())
	if err != nil {
		t.Fatal(err)
	}
	e0 := meanDist(f, []*mat.Dense{without.A, without.B, without.C})
	e1 := meanDist(f, []*mat.Dense{with.A, with.B, with.C})
	t.Logf("mean factor error: without Alg. 4 %.4g, with %.4g", e0, e1)
	if !(e1 < 0.2*e0) || !(e1 < 0.005) {
		t.Fatalf("Alg. 4 did not remove the bias: %.4g → %.4g", e0, e1)
	}
	if !(with.Residual < without.Residual) {
		t.Fatalf("residual %v with Alg. 4, %v without", with.Residual, without.Residual)
	}
}

// eq. (18): the start stays within the radius of every column and does not
// raise the spectral norm; Proc. 5 caps the singular values and clips steps.
func TestMinNormStartAndProc5(t *testing.T) {
	rng := rand.New(rand.NewPCG(82, 83))
	d, k := 10, 15
	a := unitFactors(d, k, rng)
	orig := mat.DenseCopyOf(a)
	radius := 0.1
	minNormStart(a, radius)
	for j := 0; j < k; j++ {
		if dist := math.Sqrt(colDistSq(a, orig, j)); dist > radius+1e-12 {
			t.Fatalf("column %d moved %v > %v", j, dist, radius)
		}
	}
	n0, n1 := specNorm(orig), specNorm(a)
	if !(n1 < n0-0.05) {
		t.Fatalf("spectral norm %v → %v: no decrease", n0, n1)
	}
	// Proc. 5 with only the cap: the target's singular values above
	// η₁·max(1, √(k/d)) are lowered, so the result's norm (after unit
	// renormalisation) is below the uncapped target's.
	g := unitFactors(d, k, rng)
	f := mat.DenseCopyOf(g)
	wt := make([]float64, k)
	for i := range wt {
		wt[i] = 1
	}
	proc5(f, g, wt, 0, 1)
	if !(specNorm(f) < specNorm(g)-1e-3) {
		t.Fatalf("cap had no effect: %v vs %v", specNorm(f), specNorm(g))
	}
	// With only the clip, no column moves more than η₀√k/d, up to the
	// second-order lengthening of the renormalisation (2sin(θ/2) vs sin θ).
	f = unitFactors(d, k, rng)
	old := mat.DenseCopyOf(f)
	proc5(f, g, wt, 0.5, 0)
	step := 0.5 * math.Sqrt(float64(k)) / float64(d)
	for j := 0; j < k; j++ {
		if dist := math.Sqrt(colDistSq(f, old, j)); dist > step*(1+step) {
			t.Fatalf("column %d moved %v > %v", j, dist, step)
		}
	}
}

func specNorm(a *mat.Dense) float64 {
	var svd mat.SVD
	svd.Factorize(a, mat.SVDNone)
	return svd.Values(nil)[0]
}
