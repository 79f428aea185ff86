package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// offSum is Σ_l off(A_l) for row-major d×d matrices.
func offSum(as [][]float64, d int) float64 {
	off, _ := offDiag(as, d)
	return off
}

func cloneAll(as [][]float64) [][]float64 {
	out := make([][]float64, len(as))
	for i, a := range as {
		out[i] = append([]float64(nil), a...)
	}
	return out
}

func randSymSet(d, l int, rng *rand.Rand) [][]float64 {
	as := make([][]float64, l)
	for i := range as {
		a := make([]float64, d*d)
		for p := 0; p < d; p++ {
			for q := p; q < d; q++ {
				v := rng.NormFloat64()
				a[p*d+q], a[q*d+p] = v, v
			}
		}
		as[i] = a
	}
	return as
}

// The Cardoso–Souloumiac angle of docs/MATH.md §4.5 is the exact minimiser of the
// off-diagonal energy over Givens rotations of one pair: on random 2×2 and
// 3×3 sets, no angle of a fine grid does better.
func TestJacobiAngleBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(90, 91))
	for _, d := range []int{2, 3} {
		for trial := 0; trial < 20; trial++ {
			as := randSymSet(d, 4, rng)
			got := cloneAll(as)
			c, s := jacobiAngle(as, d, 0, 1)
			for _, a := range got {
				rotate(a, d, 0, 1, c, s)
			}
			best := offSum(got, d)
			for k := -2000; k <= 2000; k++ {
				th := float64(k) / 2000 * math.Pi / 4
				try := cloneAll(as)
				for _, a := range try {
					rotate(a, d, 0, 1, math.Cos(th), math.Sin(th))
				}
				if v := offSum(try, d); v < best-1e-9*(1+best) {
					t.Fatalf("d=%d: angle %.5f gives off %.10g < %.10g at the chosen angle", d, th, v, best)
				}
			}
		}
	}
}

// The triangular step a* = −Σ_l Σ_{q≠j} A[i,q]A[j,q] / Σ_l Σ_{q≠j} A[i,q]²
// minimises the off-diagonal energy over B = I + a e_j e_iᵀ exactly (3×3,
// brute force over a grid of a).
func TestTriangularStepBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(92, 93))
	d := 3
	apply := func(as [][]float64, i, j int, a float64) {
		for _, m := range as {
			for q := 0; q < d; q++ {
				m[j*d+q] += a * m[i*d+q]
			}
			for r := 0; r < d; r++ {
				m[r*d+j] += a * m[r*d+i]
			}
		}
	}
	for trial := 0; trial < 20; trial++ {
		as := randSymSet(d, 5, rng)
		i, j := rng.IntN(d), rng.IntN(d)
		if i == j {
			j = (i + 1) % d
		}
		num, den := 0.0, 0.0
		for _, a := range as {
			for q := 0; q < d; q++ {
				if q != j {
					num += a[i*d+q] * a[j*d+q]
					den += a[i*d+q] * a[i*d+q]
				}
			}
		}
		star := -num / den
		got := cloneAll(as)
		apply(got, i, j, star)
		best := offSum(got, d)
		for k := -4000; k <= 4000; k++ {
			a := star + float64(k)/1000
			try := cloneAll(as)
			apply(try, i, j, a)
			if v := offSum(try, d); v < best-1e-9*(1+best) {
				t.Fatalf("a = %.4f gives %.10g < %.10g at a* = %.4f", a, v, best, star)
			}
		}
	}
}

// Repeated weights: every projection still separates the factors (λ_il =
// π w_lᵀu_i differs across i), so JD needs no distinct weights; the power
// method does not either ([004] §4.2).
func TestRepeatedWeights(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(94, 95))
	d := 8
	v := orthoFactors(d, d, rng)
	w := make([]float64, d)
	for i := range w {
		w[i] = 1.5
	}
	T := FromFactors(w, v)
	for _, name := range []string{"rtpm", "rtpm-stop", "ojd", "nojd", "als"} {
		f, _ := ByName(name)
		res, err := f(ctx, T, d, Options{Seed: 2})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRecovery(t, name+" equal weights", v, w, res, 1e-6, 1e-6)
	}
	// Non-orthogonal, equal weights.
	u := coherentFactors(d, d, 0.4, rng)
	T = FromFactors(w, u)
	res, err := JointDiag(ctx, T, d, Options{Seed: 2}, NonOrthogonal, true)
	if err != nil {
		t.Fatal(err)
	}
	checkRecovery(t, "nojd equal weights", u, w, res, 1e-6, 1e-6)
}

// Hitting an iteration cap is reported, not hidden: Converged = false and a
// one-line Reason, with the answer still returned.
func TestIterationCapsAreReported(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(96, 97))
	d := 8
	u := coherentFactors(d, d, 0.4, rng)
	w := make([]float64, d)
	for i := range w {
		w[i] = 1 + rng.Float64()
	}
	T := FromFactors(w, u)
	T.AddTensor(symNoise(d, 0.05, rng))
	for _, name := range []string{"rtpm", "ojd", "nojd", "als", "als-random", "alt"} {
		f, _ := ByName(name)
		res, err := f(ctx, T, d, Options{Seed: 1, Iters: 1, Restarts: 20})
		if res == nil {
			t.Fatalf("%s: no result (%v)", name, err)
		}
		if res.Converged || res.Reason == "" || !strings.Contains(res.Warning(), res.Reason) {
			t.Fatalf("%s: one iteration reported as converged (reason %q, warning %q)", name, res.Reason, res.Warning())
		}
	}
	cp, err := CPALS(ctx, Dense3FromCP(w, u, u, u), d, nil, Options{Seed: 1, Iters: 2})
	if err != nil || cp.Converged || cp.Reason == "" || cp.Warning() == "" {
		t.Fatalf("CPALS with 2 sweeps: converged %v reason %q err %v", cp.Converged, cp.Reason, err)
	}
}
