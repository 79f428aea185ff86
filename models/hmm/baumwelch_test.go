package hmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// generated returns discrete sequences in memory and their truth.
func generated(t *testing.T, cfg synth.HMMSeqConfig, batch int) (*stream.MemoryDense, *hmm.Model) {
	t.Helper()
	src, err := synth.NewHMMSeq(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, err := stream.CollectDense(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return &stream.MemoryDense{All: all, BatchRows: batch}, hmm.TruthOf(src)
}

// The log-likelihood of the passes never decreases, from the moment fit
// and from a flat start; batches cut sequences anywhere.
func TestBaumWelchNeverDecreases(t *testing.T) {
	ctx := context.Background()
	src, _ := generated(t, synth.HMMSeqConfig{Seqs: 300, Len: 20, K: 3, D: 6, Discrete: true, Seed: 3}, 97)
	mom, err := hmm.Fit(ctx, src, hmm.Config{K: 3, Discrete: true, Windows: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	flat := &hmm.Model{Model: "hmm", K: 3, D: 6, Pi: []float64{0.2, 0.3, 0.5},
		T: [][]float64{{0.5, 0.2, 0.3}, {0.25, 0.6, 0.3}, {0.25, 0.2, 0.4}}, O: make([][]float64, 3)}
	for j := range 3 {
		flat.O[j] = []float64{1, 2, 3, 4, 5, 6}
		flat.O[j][j] += 6
	}
	for name, m := range map[string]*hmm.Model{"moments": mom, "flat": flat} {
		cfg := hmm.BWConfig{Passes: 25, Tol: -1}
		r, err := hmm.Refine(ctx, src, hmm.Start(m, cfg), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ll := r.BW.LogLik
		if len(ll) != 25 {
			t.Fatalf("%s: %d passes", name, len(ll))
		}
		for i := 1; i < len(ll); i++ {
			// EM never lowers the likelihood; only rounding of the sums
			// of 6000 rows can.
			if ll[i] < ll[i-1]-1e-10*math.Abs(ll[i-1]) {
				t.Fatalf("%s: pass %d: %.12f after %.12f", name, i+1, ll[i], ll[i-1])
			}
		}
		if !(ll[len(ll)-1] > ll[0]) {
			t.Fatalf("%s: no gain %v", name, ll)
		}
		t.Logf("%s: %.5f → %.5f", name, ll[0], ll[len(ll)-1])
	}
}

// The moment start refined by Baum–Welch recovers the generated emissions
// and transitions at least as well as the moment fit alone.
func TestBaumWelchRecovers(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{5, 6} {
		src, truth := generated(t, synth.HMMSeqConfig{Seqs: 400, Len: 12, K: 3, D: 8, Discrete: true, Seed: seed}, 500)
		mom, err := hmm.Fit(ctx, src, hmm.Config{K: 3, Discrete: true, Windows: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := hmm.Refine(ctx, src, hmm.Start(mom, hmm.BWConfig{}), hmm.BWConfig{})
		if err != nil {
			t.Fatal(err)
		}
		before, err := hmm.Eval(mom, truth)
		if err != nil {
			t.Fatal(err)
		}
		after, err := hmm.Eval(r.Model, truth)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		t.Logf("seed %d, %d passes: moments %s\nBaum–Welch %s", seed, r.BW.Passes, b, a)
		if after.O > before.O+1e-9 {
			t.Errorf("seed %d: emission error %.4f after Baum–Welch, %.4f from the moments", seed, after.O, before.O)
		}
	}
}

// Shards cut at a sequence boundary merge into the statistics of the
// whole, bit for bit; and a refinement gives the same bytes whatever the
// batch size.
func TestBaumWelchMergeAndBatches(t *testing.T) {
	ctx := context.Background()
	src, truth := generated(t, synth.HMMSeqConfig{Seqs: 50, Len: 10, K: 2, D: 4, Discrete: true, Seed: 9}, 64)
	start := hmm.Start(truth, hmm.BWConfig{})
	pass := hmm.BWPass(start, 1, "")
	whole, err := pass.Run(ctx, src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	cut := 200 // sequence 20 starts at row 200
	part := func(lo, hi int) *stream.MemoryDense {
		all := src.All
		return &stream.MemoryDense{BatchRows: 33, All: &stream.Dense{Start: int64(lo), Rows: hi - lo, Cols: all.Cols,
			Data: all.Data[lo*all.Cols : hi*all.Cols], Group: all.Group[lo:hi]}}
	}
	a, err := pass.Run(ctx, part(0, cut).Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pass.Run(ctx, part(cut, src.All.Rows).Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pi", "trans", "emit", "ll", "seqs"} {
		x, y := a.Sum(name), whole.Sum(name)
		for i := range y {
			if x[i] != y[i] {
				t.Fatalf("%s[%d]: merged %v, whole %v", name, i, x[i], y[i])
			}
		}
	}
	var first []byte
	for _, batch := range []int{7, 64, 1000} {
		src.BatchRows = batch
		r, err := hmm.Refine(ctx, src, start, hmm.BWConfig{Passes: 5})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(r)
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Fatalf("batch %d: another model", batch)
		}
	}
}

// Start repairs what is not a distribution: negative and zero entries.
func TestBaumWelchStartRepairs(t *testing.T) {
	m := &hmm.Model{Model: "hmm", K: 2, D: 3, Pi: []float64{1.2, -0.2},
		T: [][]float64{{1, -0.1}, {0, 1.1}}, O: [][]float64{{0.5, 0.5, 0}, {-0.1, 0.6, 0.5}}}
	s := hmm.Start(m, hmm.BWConfig{Floor: 1e-3})
	sum := func(p []float64) float64 {
		var t float64
		for _, v := range p {
			if v < 1e-3/2 {
				return math.NaN()
			}
			t += v
		}
		return t
	}
	for _, p := range [][]float64{s.Pi, s.O[0], s.O[1], {s.T[0][0], s.T[1][0]}, {s.T[0][1], s.T[1][1]}} {
		if got := sum(p); math.Abs(got-1) > 1e-12 {
			t.Fatalf("%v is not a distribution with every entry ≥ the floor", p)
		}
	}
}
