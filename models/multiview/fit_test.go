package multiview_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Cross-moment errors are about σ·|μ|/√n ≈ 0.01 at n = 60000; the
// symmetrisation (two pseudo-inverses) and whitening multiply that by a
// condition number of a few, so 0.06 is several standard errors.
func TestFitRecovers(t *testing.T) {
	cases := []struct {
		name string
		gen  synth.MultiViewConfig
		cfg  multiview.Config
		tol  float64
	}{
		{"square", synth.MultiViewConfig{Rows: 60000, Dims: [3]int{3, 3, 3}, K: 3, Seed: 1}, multiview.Config{K: 3, Seed: 2}, 0.06},
		{"tall", synth.MultiViewConfig{Rows: 60000, Dims: [3]int{8, 6, 10}, K: 4, Seed: 3}, multiview.Config{K: 4, Seed: 2, Workers: 2}, 0.06},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := synth.NewMultiView(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.cfg
			cfg.Views = src.Truth.Views
			m, err := multiview.Fit(context.Background(), src, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := multiview.Eval(m, multiview.TruthOf(src))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("means %.4f weights %.4f weight sum %.3f", ev.Means, ev.Weights, m.Fit.WeightSum)
			for v, e := range ev.Means {
				if e > c.tol {
					t.Errorf("view %d means error %.4f > %g", v+1, e, c.tol)
				}
			}
			if ev.Weights > c.tol {
				t.Errorf("weights ℓ1 %.4f > %g", ev.Weights, c.tol)
			}
		})
	}
}

func TestEqualSplitDeterministic(t *testing.T) {
	src, err := synth.NewMultiView(synth.MultiViewConfig{Rows: 20000, Dims: [3]int{4, 4, 4}, K: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	a, err := multiview.Fit(context.Background(), src, multiview.Config{K: 2, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := multiview.Fit(context.Background(), src, multiview.Config{K: 2, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := multiview.Eval(a, multiview.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Means[2] > 0.1 {
		t.Errorf("equal split: view 3 error %.4f", ev.Means[2])
	}
	for i := range a.Weights {
		if a.Weights[i] != b.Weights[i] {
			t.Fatalf("two fits differ: %v vs %v", a.Weights, b.Weights)
		}
	}
}

func TestErrors(t *testing.T) {
	data := make([]float64, 6*10)
	for i := range data {
		data[i] = float64(i%7) + 0.1*float64(i)
	}
	bad := append([]float64(nil), data...)
	bad[6*4+2] = math.NaN()
	good := &stream.MemoryDense{All: &stream.Dense{Rows: 10, Cols: 6, Data: data}}
	cases := []struct {
		name string
		src  stream.DenseSource
		cfg  multiview.Config
		want string
		is   error
	}{
		{"nan", &stream.MemoryDense{All: &stream.Dense{Rows: 10, Cols: 6, Data: bad}}, multiview.Config{K: 1}, "row 4", stream.ErrValue},
		{"k=0", good, multiview.Config{K: 0}, "at least one", nil},
		{"views", good, multiview.Config{K: 1, Views: [][]int{{0}, {1}}}, "need 3", nil},
		{"overlap", good, multiview.Config{K: 1, Views: [][]int{{0, 1}, {1, 2}, {3}}}, "two views", nil},
		{"range", good, multiview.Config{K: 1, Views: [][]int{{0}, {1}, {9}}}, "column 9", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := multiview.Fit(context.Background(), c.src, c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v is not %v", err, c.is)
			}
		})
	}
}

// A spherical GMM is a mixture of product distributions: with the columns
// split into three random views (Prop 3.2), the view means reassemble into the
// full component means.
func TestRandomViewsGMM(t *testing.T) {
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 60000, D: 24, K: 3, Sep: 6, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	m, err := multiview.Fit(context.Background(), src, multiview.Config{K: 3, RandomViews: true, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	truth := &multiview.Model{Model: "multiview", K: 3, D: 24, Views: m.Views, Weights: src.Truth.Weights, Means: make([][][]float64, 3)}
	for v, cols := range m.Views {
		truth.Means[v] = make([][]float64, 3)
		for i := range 3 {
			for _, c := range cols {
				truth.Means[v][i] = append(truth.Means[v][i], src.Truth.Means[i][c])
			}
		}
	}
	ev, err := multiview.Eval(m, truth)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("views %v: means %.4f weights %.4f", m.Views, ev.Means, ev.Weights)
	for v, e := range ev.Means {
		if e > 0.05 {
			t.Errorf("view %d means error %.4f > 0.05", v+1, e)
		}
	}
	if ev.Weights > 0.05 {
		t.Errorf("weights ℓ1 %.4f > 0.05", ev.Weights)
	}
}

// TestFewerComponents: k above what the views hold (wider than a view
// here) fits the components the cross moments support, with a warning,
// and finds the true ones among them.
func TestFewerComponents(t *testing.T) {
	src, err := synth.NewMultiView(synth.MultiViewConfig{Rows: 60000, Dims: [3]int{4, 4, 4}, K: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := multiview.Fit(context.Background(), src, multiview.Config{K: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.K >= 40 || m.K < 3 || len(m.Weights) != m.K || !strings.Contains(strings.Join(m.Warnings(), "\n"), "support") {
		t.Fatalf("k=40: %d components, warnings %q; want 3 to the views' width, with a warning", m.K, m.Warnings())
	}
}
