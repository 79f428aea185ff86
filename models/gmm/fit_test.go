package gmm_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// The tolerances are a few standard errors of moment estimates at these
// sample sizes (errors fall like 1/√n; whitening multiplies them by a small
// condition number since the means are well separated).
func TestFitRecovers(t *testing.T) {
	cases := []struct {
		name string
		gen  synth.GMMConfig
		cfg  gmm.Config
		tol  float64
	}{
		{"common-exact", synth.GMMConfig{Rows: 60000, D: 20, K: 4, Seed: 1}, gmm.Config{K: 4, Seed: 2}, 0.05},
		{"common-sigmamin", synth.GMMConfig{Rows: 60000, D: 20, K: 4, Seed: 1}, gmm.Config{K: 4, Seed: 2, SigmaMin: true}, 0.06},
		{"differing-exact", synth.GMMConfig{Rows: 80000, D: 20, K: 3, Seed: 3, Differing: true}, gmm.Config{K: 3, Differing: true, Seed: 2}, 0.05},
		{"common-sketch", synth.GMMConfig{Rows: 20000, D: 120, K: 5, Seed: 4, Sep: 6}, gmm.Config{K: 5, ExactDim: 30, Seed: 2, Workers: 2}, 0.05},
		{"differing-sketch", synth.GMMConfig{Rows: 30000, D: 100, K: 3, Seed: 5, Sep: 6, Differing: true}, gmm.Config{K: 3, Differing: true, ExactDim: 30, Seed: 2, Workers: 2}, 0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := synth.NewGMM(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			m, err := gmm.Fit(context.Background(), src, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := gmm.Eval(m, gmm.TruthOf(src))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("means %.4f weights %.4f variances %.4f sigma2 %.4f passes %d %s", ev.Means, ev.Weights, ev.Variances, m.Fit.Sigma2, m.Fit.Passes, m.Fit.Method)
			// The sketched path takes the most passes a fit can (what a
			// pipeline sizes its stages by); the exact path 2.
			if want := map[string]int{"sketch": c.cfg.MaxPasses(), "exact": 2}[m.Fit.Method]; m.Fit.Passes != want {
				t.Errorf("%d passes on the %s path, want %d", m.Fit.Passes, m.Fit.Method, want)
			}
			if ev.Means > c.tol || ev.Weights > 2*c.tol {
				t.Errorf("means error %.4f, weights ℓ1 %.4f, want ≤ %g, %g", ev.Means, ev.Weights, c.tol, 2*c.tol)
			}
			vtol := 0.05
			if c.gen.Differing {
				vtol = 0.25 // σᵢ² come from a first-order moment divided by small weights
			}
			if ev.Variances > vtol {
				t.Errorf("variance error %.4f > %g (fit %v, truth %v)", ev.Variances, vtol, m.Variances, src.Truth.Variances)
			}
		})
	}
}

func TestFitDeterministic(t *testing.T) {
	src, _ := synth.NewGMM(synth.GMMConfig{Rows: 5000, D: 8, K: 3, Seed: 9, BatchRows: 300})
	a, err := gmm.Fit(context.Background(), src, gmm.Config{K: 3, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gmm.Fit(context.Background(), src, gmm.Config{K: 3, Seed: 1, Workers: 2})
	for i := range a.Means {
		for j := range a.Means[i] {
			if a.Means[i][j] != b.Means[i][j] {
				t.Fatalf("two fits with the same seed differ at mean %d,%d", i, j)
			}
		}
	}
}

func TestFitErrors(t *testing.T) {
	good := &stream.Dense{Rows: 4, Cols: 2, Data: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	bad := &stream.Dense{Rows: 4, Cols: 2, Data: []float64{1, 2, 3, math.NaN(), 5, 6, 7, 8}}
	ctx := context.Background()
	if _, err := gmm.Fit(ctx, &stream.MemoryDense{All: good}, gmm.Config{K: 3}); err == nil || !strings.Contains(err.Error(), "k ≤ d") {
		t.Errorf("k > d: got %v", err)
	}
	_, err := gmm.Fit(ctx, &stream.MemoryDense{All: bad}, gmm.Config{K: 1})
	if !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("NaN: got %v", err)
	}
	if _, err := gmm.Fit(ctx, &stream.MemoryDense{All: good}, gmm.Config{K: 0}); err == nil {
		t.Error("k = 0 accepted")
	}
	if _, err := gmm.Fit(ctx, &stream.MemoryDense{All: good}, gmm.Config{K: 2, Sigma2: 1, Differing: true}); err == nil {
		t.Error("known sigma2 with differing variances accepted")
	}
	if _, err := gmm.Fit(ctx, &stream.MemoryDense{All: good}, gmm.Config{K: 1, Solver: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown solver: got %v", err)
	}
}

// The solver is chosen by name (it used to be fixed to the power method):
// orthogonal joint diagonalisation recovers the same mixture.
func TestFitSolverByName(t *testing.T) {
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 60000, D: 20, K: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gmm.Fit(context.Background(), src, gmm.Config{K: 4, Seed: 2, Solver: "ojd"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := gmm.Eval(m, gmm.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.Fit.Solver != "ojd" || ev.Means > 0.05 {
		t.Errorf("solver %q: means error %.4f", m.Fit.Solver, ev.Means)
	}
}

// wrongWidth reports d columns but yields rows of another width.
type wrongWidth struct{ stream.MemoryDense }

func (w *wrongWidth) Info() stream.Info { i := w.MemoryDense.Info(); i.Cols = 3; return i }

func TestFitWrongDimension(t *testing.T) {
	src := &wrongWidth{stream.MemoryDense{All: &stream.Dense{Rows: 2, Cols: 2, Data: []float64{1, 2, 3, 4}}}}
	_, err := gmm.Fit(context.Background(), src, gmm.Config{K: 1})
	if !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "expected d=3") {
		t.Errorf("got %v", err)
	}
}
