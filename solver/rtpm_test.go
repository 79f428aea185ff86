package solver

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// orthoFactors returns r orthonormal columns in R^d (Q of a Gaussian matrix).
func orthoFactors(d, r int, rng *rand.Rand) *mat.Dense {
	var qr mat.QR
	qr.Factorize(randDense(d, r, rng))
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, d, 0, r))
}

// symNoise returns a symmetric Gaussian tensor scaled so its Frobenius norm is eps.
func symNoise(d int, eps float64, rng *rand.Rand) *Sym3 {
	e, _ := randomSym(d, rng)
	e.Scale(eps / math.Sqrt(e.FrobeniusSq()))
	return e
}

// checkRecovery matches est to truth and fails if any factor is further than
// vtol or any weight further than wtol (relative).
func checkRecovery(t *testing.T, name string, truth *mat.Dense, w []float64, res *Result, vtol, wtol float64) {
	t.Helper()
	match, dist := MatchColumns(truth, res.Factors)
	for i, j := range match {
		if j < 0 || dist[i] > vtol {
			t.Fatalf("%s: factor %d: match %d distance %.3g > %.3g", name, i, j, dist[i], vtol)
		}
		// Weights carry the sign of the factor's orientation.
		s := mat.Dot(truth.ColView(i), res.Factors.ColView(j))
		got := res.Weights[j] * math.Copysign(1, s)
		if math.Abs(got-w[i]) > wtol*math.Abs(w[i]) {
			t.Fatalf("%s: weight %d = %.6g want %.6g", name, i, got, w[i])
		}
	}
}

func TestRTPMNoiseless(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(10, 11))
	for _, tc := range []struct{ d, r int }{{8, 8}, {10, 4}, {20, 20}} {
		v := orthoFactors(tc.d, tc.r, rng)
		w := make([]float64, tc.r)
		for i := range w {
			w[i] = 1 + 4*rng.Float64()
		}
		T := FromFactors(w, v)
		res, err := RTPM(ctx, T, tc.r, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// Exact data: quadratic convergence reaches rounding level.
		checkRecovery(t, "explicit", v, w, res, 1e-7, 1e-9)
		if !(res.Residual < 1e-6) {
			t.Fatalf("residual %v", res.Residual)
		}
		// The implicit (Apply-only) view must give the same answer.
		imp, err := RTPM(ctx, applyOnly{T}, tc.r, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkRecovery(t, "implicit", v, w, imp, 1e-7, 1e-9)
		if !mat.EqualApprox(imp.Factors, res.Factors, 1e-8) {
			t.Fatal("explicit and implicit runs differ")
		}
	}
}

func TestRTPMNoisy(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(12, 13))
	d, r := 10, 6
	v := orthoFactors(d, r, rng)
	w := make([]float64, r)
	for i := range w {
		w[i] = 2 + rng.Float64()
	}
	T := FromFactors(w, v)
	eps := 0.01
	T.AddTensor(symNoise(d, eps, rng)) // ‖E‖ ≤ ‖E‖_F = eps
	res, err := RTPM(ctx, T, r, Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Thm 5.1: ‖v − v̂‖ ≤ 8ε/λ and |λ − λ̂| ≤ 5ε.
	checkRecovery(t, "noisy", v, w, res, 8*eps/2, 5*eps/2)
}

func TestRTPMDeterministicAndErrors(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(14, 15))
	v := orthoFactors(6, 3, rng)
	T := FromFactors([]float64{1, 2, 3}, v)
	T.AddTensor(symNoise(6, 0.05, rng))
	a, err := RTPM(ctx, T, 3, Options{Seed: 7, Restarts: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RTPM(ctx, T, 3, Options{Seed: 7, Restarts: 5})
	if !mat.Equal(a.Factors, b.Factors) || a.Iters != b.Iters {
		t.Fatal("same seed gave different results")
	}
	if _, err := RTPM(ctx, T, 7, Options{}); !errors.Is(err, ErrRank) {
		t.Fatalf("rank > dim: got %v", err)
	}
	if _, err := RTPM(ctx, T, 0, Options{}); !errors.Is(err, ErrRank) {
		t.Fatalf("rank 0: got %v", err)
	}
	// A rank-2 tensor asked for 4 components: the 3rd or 4th eigenvalue is ≤ 0
	// or the remaining tensor is zero.
	z := FromFactors([]float64{1, 1}, v.Slice(0, 6, 0, 2).(*mat.Dense))
	res, err := RTPM(ctx, z, 4, Options{Seed: 1})
	if !errors.Is(err, ErrNonPositive) || res == nil || len(res.Weights) != 2 {
		t.Fatalf("over-asked rank: err %v res %+v", err, res)
	}
}

func TestRTPMStop(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(16, 17))
	d, r := 12, 12
	v := orthoFactors(d, r, rng)
	w := make([]float64, r)
	for i := range w {
		w[i] = 1 + rng.Float64()
	}
	T := FromFactors(w, v)
	res, err := RTPMStop(ctx, T, r, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkRecovery(t, "stop noiseless", v, w, res, 1e-7, 1e-9)
	if res.Fallbacks != 0 {
		t.Fatalf("noiseless tensor needed %d fallbacks", res.Fallbacks)
	}
	// The stopping rule needs far fewer starts than the fixed L = max(20,k).
	if res.Restarts >= r*defaultRestarts(d) {
		t.Fatalf("used %d starts", res.Restarts)
	}
	T.AddTensor(symNoise(d, 0.01, rng))
	noisy, err := RTPMStop(ctx, applyOnly{T}, r, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkRecovery(t, "stop noisy implicit", v, w, noisy, 8*0.01, 5*0.01)
}
