package hmm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestFitFewerStates asks for more states than the moments can give (8
// states of 6 symbols: the second moment has at most 6 positive
// directions). The fit warns instead of refusing, fits the states the
// moments give, starts the others as perturbed copies, and its Baum–Welch
// passes raise the likelihood above that start; the model is a
// distribution with 8 states.
func TestFitFewerStates(t *testing.T) {
	ctx := context.Background()
	const batch = 97
	src, _ := generated(t, synth.HMMSeqConfig{Seqs: 300, Len: 20, K: 3, D: 6, Discrete: true, Seed: 3}, batch)
	cfg := hmm.DefaultConfig(8)
	cfg.Windows = true
	m, err := hmm.Fit(ctx, src, cfg)
	if err != nil {
		t.Fatalf("batches of %d: %v", batch, err)
	}
	if m.K != 8 || len(m.O) != 8 || len(m.T) != 8 || len(m.Pi) != 8 {
		t.Fatalf("batches of %d: k=%d, %d emission rows: want 8 states", batch, m.K, len(m.O))
	}
	w := strings.Join(m.Warnings(), "\n")
	if !strings.Contains(w, "of the 8 states") {
		t.Errorf("batches of %d: warnings %q: want one saying the moments gave fewer states", batch, w)
	}
	sum := func(what string, v []float64) {
		s := 0.0
		for _, x := range v {
			if !(x >= 0) {
				t.Fatalf("%s has %g", what, x)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("%s sums to %.12f", what, s)
		}
	}
	sum("pi", m.Pi)
	for j := range 8 {
		sum("an emission row", m.O[j])
		col := make([]float64, 8)
		for i := range 8 {
			col[i] = m.T[i][j]
		}
		sum("a transition column", col)
	}
	ll := m.Fit.EM.LogLik
	if len(ll) < 2 || !(ll[len(ll)-1] > ll[0]) {
		t.Errorf("batches of %d: log-likelihood per row %v: want it raised from the split start", batch, ll)
	}
	t.Logf("batches of %d: %s; log-likelihood per row %.5f → %.5f in %d passes", batch, w, ll[0], ll[len(ll)-1], len(ll))
}

// TestMomentFitFewerStates asks the moment fit of Gaussian observations
// for more states than the d=3 columns hold: it warns instead of refusing,
// and its model is the fit of d states, which recovers the true ones.
func TestMomentFitFewerStates(t *testing.T) {
	ctx := context.Background()
	src, truth := generated(t, synth.HMMSeqConfig{Seqs: 60000, Len: 3, K: 3, D: 3, Seed: 1}, 1000)
	m, err := hmm.Fit(ctx, src, hmm.Config{K: 5, Seed: 2})
	if err != nil {
		t.Fatalf("k=5 > d=3: %v", err)
	}
	w := strings.Join(m.Warnings(), "\n")
	if m.K != 3 || len(m.O) != 3 || len(m.T) != 3 || len(m.Pi) != 3 || !strings.Contains(w, "the moments give 3 of the 5 states (k=5 exceeds the dimension d=3)") {
		t.Fatalf("k=5 > d=3: %d states, warnings %q; want 3, with a warning", m.K, w)
	}
	at3, err := hmm.Fit(ctx, src, hmm.Config{K: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([][][]float64{m.O, m.T, {m.Pi}}, [][][]float64{at3.O, at3.T, {at3.Pi}}) || len(at3.Warnings()) != len(m.Warnings())-1 {
		t.Errorf("k=5 differs from k=3 beyond the warning:\n%v %v %v %q\n%v %v %v %q", m.O, m.T, m.Pi, m.Warnings(), at3.O, at3.T, at3.Pi, at3.Warnings())
	}
	ev, err := hmm.Eval(m, truth)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; O %.4f T %.4f π %.4f", w, ev.O, ev.T, ev.Pi)
	if ev.O > 0.05 || ev.T > 0.1 || ev.Pi > 0.1 {
		t.Errorf("errors O %.4f T %.4f π %.4f exceed 0.05, 0.1, 0.1", ev.O, ev.T, ev.Pi)
	}
}

// TestMomentFitSharedMean fits 3 states to sequences whose states 2 and 3
// have the same mean observation and the same transitions: the cross
// moments of consecutive steps have rank 2, and the fit warns and gives
// the 2 states the sequences hold (the chain with 2 and 3 lumped) instead
// of refusing k=3 ≤ d.
func TestMomentFitSharedMean(t *testing.T) {
	const seqs, steps, d = 60000, 3, 4
	means := [][]float64{{3, 0, 1, 1}, {0, 3, 1, 1}}
	mean := []int{0, 1, 1}                                                 // state → its mean
	next := [][]float64{{0.8, 0.1, 0.1}, {0.4, 0.3, 0.3}, {0.4, 0.3, 0.3}} // next[j]: the next state's distribution after j
	pi := []float64{0.3, 0.35, 0.35}
	draw := func(r *rand.Rand, p []float64) int {
		u := r.Float64()
		for i, v := range p {
			if u -= v; u < 0 {
				return i
			}
		}
		return len(p) - 1
	}
	r := rand.New(rand.NewPCG(4, 5))
	all := &stream.Dense{Rows: seqs * steps, Cols: d, Data: make([]float64, 0, seqs*steps*d), Group: make([]int64, 0, seqs*steps)}
	for s := range seqs {
		y := draw(r, pi)
		for range steps {
			// Noise in the plane of the means keeps the rank at 2.
			g1, g2 := 0.3*r.NormFloat64(), 0.3*r.NormFloat64()
			for c := range d {
				all.Data = append(all.Data, means[mean[y]][c]+g1*means[0][c]+g2*means[1][c])
			}
			all.Group = append(all.Group, int64(s))
			y = draw(r, next[y])
		}
	}
	m, err := hmm.Fit(context.Background(), &stream.MemoryDense{All: all, BatchRows: 1000}, hmm.Config{K: 3, Seed: 2})
	if err != nil {
		t.Fatalf("k=3 ≤ d=4, cross moments of rank 2: %v", err)
	}
	w := strings.Join(m.Warnings(), "\n")
	if m.K != 2 || !strings.Contains(w, "the moments give 2 of the 3 states (the cross moments of consecutive steps support only 2") {
		t.Fatalf("%d states, warnings %q; want 2, with a warning", m.K, w)
	}
	lumped := &hmm.Model{Model: "hmm", K: 2, D: d, O: means, T: [][]float64{{0.8, 0.4}, {0.2, 0.6}}, Pi: []float64{0.3, 0.7}}
	ev, err := hmm.Eval(m, lumped)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; O %.4f T %.4f π %.4f", w, ev.O, ev.T, ev.Pi)
	if ev.O > 0.05 || ev.T > 0.1 || ev.Pi > 0.1 {
		t.Errorf("against the lumped chain: errors O %.4f T %.4f π %.4f exceed 0.05, 0.1, 0.1", ev.O, ev.T, ev.Pi)
	}
}
