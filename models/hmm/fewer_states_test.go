package hmm_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
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
