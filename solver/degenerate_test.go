package solver

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every registered solver handles the degenerate inputs of the quality bar
// with a clear error (or the documented partial answer):
//   - a rank above the tensor's (rank-deficient projections for JD, no
//     positive eigenvalue left for the power methods, a non-unique fit for
//     ALS, a shortfall of components for alt): an error wrapping
//     ErrDegenerate, ErrNonPositive or ErrNoConvergence whose message says
//     to lower the rank or add starts; when components come back with it,
//     they are the tensor's true ones;
//   - r > dim for the methods that need whitened (orthogonal) or full-rank
//     slices: ErrRank naming the dimension.
func TestDegenerateInputEveryRegisteredSolver(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(98, 99))
	d := 6
	v := orthoFactors(d, 2, rng)
	w := []float64{2, 1}
	T := FromFactors(w, v)
	dimBound := map[string]bool{"rtpm": true, "rtpm-stop": true, "simultaneous": true,
		"ojd": true, "ojd0": true, "nojd": true, "nojd0": true}
	for _, name := range Names() {
		f, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range []uint64{1, 2, 3} {
			res, err := f(ctx, T, 4, Options{Seed: seed})
			if !errors.Is(err, ErrDegenerate) && !errors.Is(err, ErrNonPositive) && !errors.Is(err, ErrNoConvergence) {
				t.Fatalf("%s seed %d: rank 4 of a rank-2 tensor: err %v", name, seed, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "lower the rank") && !strings.Contains(msg, "more restarts") {
				t.Fatalf("%s: the error does not say what to do: %v", name, err)
			}
			if res != nil && len(res.Weights) > 0 {
				if len(res.Weights) > 2 {
					t.Fatalf("%s: %d components returned with the error", name, len(res.Weights))
				}
				match, dist := MatchColumns(v, res.Factors)
				for i, j := range match {
					if j < 0 {
						continue
					}
					if dist[i] > 1e-6 || math.Abs(res.Weights[j]-w[i]) > 1e-6 {
						t.Fatalf("%s: partial answer is wrong: component %d at distance %g, weight %g (want %g)", name, i, dist[i], res.Weights[j], w[i])
					}
				}
			}
		}
		_, err = f(ctx, T, d+1, Options{Seed: 1})
		switch {
		case dimBound[name] && !errors.Is(err, ErrRank):
			t.Fatalf("%s: r > dim: want ErrRank, got %v", name, err)
		case dimBound[name] && !strings.Contains(err.Error(), "dim=6"):
			t.Fatalf("%s: r > dim error does not name the dimension: %v", name, err)
		case !dimBound[name] && errors.Is(err, ErrRank):
			t.Fatalf("%s accepts r > dim (overcomplete) but returned ErrRank: %v", name, err)
		}
	}
}

// Every registered solver gives the same answer on an explicit packed
// tensor and on the same tensor seen only through Apply (the generic
// slice, norm and contraction fallbacks an implicit operator over data rows
// gets), with the same seed: the answer cannot depend on the representation.
func TestEverySolverExplicitImplicitAgree(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(100, 101))
	d, r := 8, 5
	v := orthoFactors(d, r, rng)
	w := []float64{1, 1.3, 1.6, 1.9, 2.2}
	T := FromFactors(w, v)
	T.AddTensor(symNoise(d, 0.01, rng))
	for _, name := range Names() {
		f, _ := ByName(name)
		exp, err := f(ctx, T, r, Options{Seed: 5})
		if err != nil {
			t.Fatalf("%s explicit: %v", name, err)
		}
		imp, err := f(ctx, applyOnly{T}, r, Options{Seed: 5})
		if err != nil {
			t.Fatalf("%s implicit: %v", name, err)
		}
		match, dist := MatchColumns(exp.Factors, imp.Factors)
		for i, j := range match {
			if j < 0 || dist[i] > 1e-7 || math.Abs(exp.Weights[i]-imp.Weights[j]) > 1e-7 {
				t.Fatalf("%s: explicit and implicit differ at component %d: distance %g, weights %g vs %g", name, i, dist[i], exp.Weights[i], imp.Weights[max(j, 0)])
			}
		}
		if name != "als-random" {
			checkRecovery(t, name, v, w, exp, 0.01, 0.02)
			// Convergence report: iterations counted, and the relative
			// residual of a tensor that knows its norm is the noise level
			// (‖E‖_F = 0.01 against ‖T‖_F ≈ 3.7), not NaN or zero.
			if exp.Iters < 1 || !(exp.Residual > 1e-4 && exp.Residual < 1e-2) {
				t.Fatalf("%s: iters %d, residual %v", name, exp.Iters, exp.Residual)
			}
		}
	}
}
