package gmm_test

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream/synth"
)

// The sketched path (large d: randomized top eigenvectors, σ² from the
// trace) and the exact path (the d×d second moment) give the same model on
// the same data when the sketch is forced on a small d by ExactDim. With 8
// power passes the sketch's subspace error, which shrinks like
// (|λ_noise − shift|/(λ_k − shift))^(2q+1) ≈ 0.25^17, is below rounding of
// the moments, so the paths agree far below the sampling error (≈ 0.01).
func TestSketchMatchesExact(t *testing.T) {
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 20000, D: 40, K: 4, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	for _, differing := range []bool{false, true} {
		exact, err := gmm.Fit(context.Background(), src, gmm.Config{K: 4, Differing: differing, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		sk, err := gmm.Fit(context.Background(), src, gmm.Config{K: 4, Differing: differing, Seed: 2, ExactDim: 10, PowerIters: 8})
		if err != nil {
			t.Fatal(err)
		}
		if exact.Fit.Method != "exact" || sk.Fit.Method != "sketch" {
			t.Fatalf("methods %s and %s", exact.Fit.Method, sk.Fit.Method)
		}
		ev, err := gmm.Eval(sk, exact)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("differing=%v: σ² %.5f vs %.5f; sketch vs exact: means %.2g weights %.2g variances %.2g", differing, sk.Fit.Sigma2, exact.Fit.Sigma2, ev.Means, ev.Weights, ev.Variances)
		if ev.Means > 1e-4 || ev.Weights > 1e-4 || ev.Variances > 1e-3 || math.Abs(sk.Fit.Sigma2-exact.Fit.Sigma2) > 1e-6 {
			t.Errorf("sketch and exact paths disagree: means %.2g, weights %.2g, variances %.2g", ev.Means, ev.Weights, ev.Variances)
		}
	}
}
