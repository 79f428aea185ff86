package ica_test

import (
	"context"
	"errors"
	"iter"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fourth-moment estimates have standard errors of order √(E h⁸/n): about
// 0.02–0.05 for n = 50000 Laplace/uniform sources, which whitening by a
// random (condition ≈ 3–5) mixing matrix inflates a little; the tolerances
// are a few of those.
func TestFitRecovers(t *testing.T) {
	cases := []struct {
		name string
		gen  synth.ICAConfig
		cfg  ica.Config
		tol  float64
	}{
		{"square", synth.ICAConfig{Rows: 50000, D: 4, K: 4, Seed: 1}, ica.Config{K: 4, Seed: 2}, 0.05},
		{"noisy", synth.ICAConfig{Rows: 60000, D: 10, K: 4, Sigma: 0.3, Seed: 3}, ica.Config{K: 4, Seed: 2, Workers: 2}, 0.05},
		{"sketch", synth.ICAConfig{Rows: 40000, D: 80, K: 3, Sigma: 0.1, Seed: 5}, ica.Config{K: 3, ExactDim: 20, Seed: 2, Workers: 2}, 0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := synth.NewICA(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ica.Fit(context.Background(), src, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ica.Eval(m, ica.TruthOf(src))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mixing %.4f maxsin %.4f kurtosis %.3f (fit %.2f) passes %d %s refine %d", ev.Mixing, ev.MaxSine, ev.Kurtosis, m.Kurtosis, m.Fit.Passes, m.Fit.Method, m.Fit.RefineIters)
			// A fit whose polishing runs to its cap (the default contrast's)
			// takes the most passes of its path; the sketched path's are
			// MaxPasses (what a pipeline sizes its stages by), the exact
			// path 1+PowerIters fewer.
			want := c.cfg.MaxPasses() - ica.DefaultLogcoshSteps + m.Fit.RefineIters
			if m.Fit.Method == "exact" {
				want -= 1 + 2 // the default PowerIters
			}
			if m.Fit.Passes != want {
				t.Errorf("%d passes on the %s path after %d polishing steps, want %d", m.Fit.Passes, m.Fit.Method, m.Fit.RefineIters, want)
			}
			if ev.Mixing > c.tol || ev.Kurtosis > 0.5 {
				t.Errorf("mixing error %.4f (want ≤ %g), kurtosis error %.3f (want ≤ 0.5)", ev.Mixing, c.tol, ev.Kurtosis)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	src, err := synth.NewICA(synth.ICAConfig{Rows: 5000, D: 5, K: 3, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ica.Fit(context.Background(), src, ica.Config{K: 3, Seed: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ica.Fit(context.Background(), src, ica.Config{K: 3, Seed: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Mixing {
		for j := range a.Mixing[i] {
			if a.Mixing[i][j] != b.Mixing[i][j] {
				t.Fatalf("two fits differ at (%d,%d): %v vs %v", i, j, a.Mixing[i][j], b.Mixing[i][j])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	good := &stream.Dense{Rows: 3, Cols: 2, Data: []float64{1, 2, 3, 4, 5, 6}}
	nan := &stream.Dense{Rows: 3, Cols: 2, Data: []float64{1, 2, 3, math.NaN(), 5, 6}}
	inf := &stream.Dense{Rows: 3, Cols: 2, Data: []float64{1, 2, 3, 4, math.Inf(1), 6}}
	cases := []struct {
		name string
		src  stream.DenseSource
		cfg  ica.Config
		want string
		is   error
	}{
		{"nan", &stream.MemoryDense{All: nan}, ica.Config{K: 1}, "row 1", stream.ErrValue},
		{"inf", &stream.MemoryDense{All: inf}, ica.Config{K: 1}, "row 2", stream.ErrValue},
		{"constant", &stream.MemoryDense{All: &stream.Dense{Rows: 3, Cols: 2, Data: []float64{1, 2, 1, 2, 1, 2}}}, ica.Config{K: 1}, "do not vary", ica.ErrSpectrum},
		{"k=0", &stream.MemoryDense{All: good}, ica.Config{K: 0}, "at least one", nil},
		{"width", &wrongWidth{}, ica.Config{K: 1}, "expected d=2", stream.ErrValue},
		{"solver", &stream.MemoryDense{All: good}, ica.Config{K: 1, Solver: "nope"}, "nope", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ica.Fit(context.Background(), c.src, c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v is not %v", err, c.is)
			}
		})
	}
}

// wrongWidth claims 2 columns but yields rows of 3.
type wrongWidth struct{}

func (wrongWidth) Info() stream.Info { return stream.Info{Format: "memory", Cols: 2, Rows: 2} }
func (w wrongWidth) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	all := &stream.Dense{Rows: 2, Cols: 3, Data: []float64{1, 2, 3, 4, 5, 6}}
	return (&stream.MemoryDense{All: all}).Rows(ctx)
}

// TestFewerSources: real data may support fewer sources than asked — k
// above the dimension, or a covariance of lower rank (constant columns,
// rows less their own mean). The fit then takes as many as there are,
// with a warning, and recovers them as a fit asked for that many does.
func TestFewerSources(t *testing.T) {
	src, err := synth.NewICA(synth.ICAConfig{Rows: 50000, D: 4, K: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ica.Fit(context.Background(), src, ica.Config{K: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	over, err := ica.Fit(context.Background(), src, ica.Config{K: 7, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if over.K != 4 || !hasWarning(over.Warnings(), "k=7 exceeds the dimension d=4") {
		t.Fatalf("k=7 on d=4: %d components, warnings %q", over.K, over.Warnings())
	}
	ev, err := ica.Eval(over, ica.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Mixing > 0.05 {
		t.Errorf("k=7 on d=4: mixing error %.4f, want ≤ 0.05", ev.Mixing)
	}
	for i := range exact.Mixing {
		for j := range exact.Mixing[i] {
			if exact.Mixing[i][j] != over.Mixing[i][j] {
				t.Fatalf("k=7 differs from k=4 at (%d,%d): %v vs %v", i, j, over.Mixing[i][j], exact.Mixing[i][j])
			}
		}
	}

	// The same rows with two constant columns added: a covariance of rank
	// 4 in d=6, so k=6 (and k=5) find the 4 sources.
	all := readAll(t, src)
	wide := &stream.Dense{Rows: all.Rows, Cols: 6, Data: make([]float64, all.Rows*6)}
	for r := range all.Rows {
		copy(wide.Data[r*6:], all.Data[r*4:(r+1)*4])
		wide.Data[r*6+4], wide.Data[r*6+5] = 3, -1
	}
	for _, k := range []int{5, 6} {
		m, err := ica.Fit(context.Background(), &stream.MemoryDense{All: wide}, ica.Config{K: k, Seed: 2})
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if m.K != 4 || !hasWarning(m.Warnings(), "only 4 directions above the noise level") {
			t.Fatalf("k=%d on rank 4: %d components, warnings %q", k, m.K, m.Warnings())
		}
		var worst float64
		for _, col := range m.Mixing {
			worst = math.Max(worst, math.Abs(col[4])+math.Abs(col[5]))
		}
		if worst > 1e-6 {
			t.Errorf("k=%d: a component loads %.3g on the constant columns", k, worst)
		}
	}
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// readAll returns every row of src in one batch.
func readAll(t *testing.T, src stream.DenseSource) *stream.Dense {
	t.Helper()
	out := &stream.Dense{Cols: src.Info().Cols}
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out.Data = append(out.Data, b.Data[:b.Rows*b.Cols]...)
		out.Rows += b.Rows
	}
	return out
}
