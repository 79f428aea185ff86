package hmm_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// One triple per sequence: with 100000 sequences the cross moments carry
// errors near 1/√n ≈ 0.003 per entry; T = O⁺(OT) and π = T⁻¹w divide by the
// conditioning of O and T (a few), so T and π get the looser tolerances.
func TestFitRecovers(t *testing.T) {
	cases := []struct {
		name          string
		gen           synth.HMMSeqConfig
		cfg           hmm.Config
		tolO, tolT, p float64
	}{
		{"gaussian", synth.HMMSeqConfig{Seqs: 60000, Len: 3, K: 3, D: 6, Seed: 1}, hmm.Config{K: 3, Seed: 2}, 0.03, 0.08, 0.08},
		{"discrete", synth.HMMSeqConfig{Seqs: 400000, Len: 3, K: 3, D: 8, Discrete: true, Seed: 4}, hmm.Config{K: 3, Discrete: true, Seed: 2}, 0.08, 0.15, 0.15},
		// With windows π is the average state distribution of the window starts, not
		// the initial one, so it is not compared.
		{"discrete-windows", synth.HMMSeqConfig{Seqs: 20000, Len: 20, K: 3, D: 8, Discrete: true, Seed: 6}, hmm.Config{K: 3, Discrete: true, Windows: true, Seed: 2}, 0.08, 0.15, -1},
		{"windows", synth.HMMSeqConfig{Seqs: 4000, Len: 30, K: 3, D: 6, Seed: 5}, hmm.Config{K: 3, Windows: true, Seed: 2}, 0.03, 0.08, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := synth.NewHMMSeq(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			m, err := hmm.Fit(context.Background(), src, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := hmm.Eval(m, hmm.TruthOf(src))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("O %.4f T %.4f pi %.4f triples %d sequences %d projected %.3f w %.3f white %.3g", ev.O, ev.T, ev.Pi, m.Fit.Triples, m.Fit.Sequences, m.Fit.Projected, m.Fit.W, m.Fit.Whitening)
			if ev.O > c.tolO || ev.T > c.tolT || (c.p > 0 && ev.Pi > c.p) {
				t.Errorf("errors O %.4f T %.4f π %.4f exceed %g, %g, %g", ev.O, ev.T, ev.Pi, c.tolO, c.tolT, c.p)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	src, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 5000, Len: 4, K: 2, D: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a, err := hmm.Fit(context.Background(), src, hmm.Config{K: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := hmm.Fit(context.Background(), src, hmm.Config{K: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.T {
		for j := range a.T[i] {
			if a.T[i][j] != b.T[i][j] {
				t.Fatalf("two fits differ: %v vs %v", a.T, b.T)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	mk := func(ids []int64, nanRow int) stream.DenseSource {
		n := len(ids)
		data := make([]float64, 3*n)
		for i := range data {
			data[i] = float64(i%5) + 0.3*float64(i)
		}
		if nanRow >= 0 {
			data[3*nanRow+1] = math.NaN()
		}
		all := &stream.Dense{Rows: n, Cols: 3, Data: data, Group: ids}
		return &stream.MemoryDense{All: all, BatchRows: 4}
	}
	noID := &stream.MemoryDense{All: &stream.Dense{Rows: 3, Cols: 3, Data: make([]float64, 9)}}
	zero := &stream.MemoryDense{All: &stream.Dense{Rows: 6, Cols: 3, Data: make([]float64, 18), Group: []int64{0, 0, 0, 1, 1, 1}}}
	cases := []struct {
		name string
		src  stream.DenseSource
		k    int
		want string
		is   error
	}{
		{"nan", mk([]int64{0, 0, 0, 1, 1, 1, 1}, 5), 1, "row 5", stream.ErrValue},
		{"no-id", noID, 1, "no sequence id", stream.ErrSchema},
		{"short-middle", mk([]int64{0, 0, 0, 1, 1, 2, 2, 2}, -1), 1, "sequence 1 has 2 rows", hmm.ErrShort},
		{"short-last", mk([]int64{0, 0, 0, 0, 0, 7}, -1), 1, "sequence 7 has 1 rows", hmm.ErrShort},
		{"k<1", mk([]int64{0, 0, 0}, -1), 0, "k=0, need at least one state", nil},
		// Fewer states than k are fitted with a warning, but not none.
		{"zero", zero, 2, "hmm: the cross moments support not one state", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := hmm.Fit(context.Background(), c.src, hmm.Config{K: c.k})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v is not %v", err, c.is)
			}
		})
	}
}

// A sequence whose rows are not contiguous (its id comes back after another
// one) is an order error naming the row.
func TestNonContiguousSequence(t *testing.T) {
	data := make([]float64, 9)
	for _, batch := range []int{2, 100} {
		src := &stream.MemoryDense{All: &stream.Dense{Rows: 9, Cols: 1, Data: data, Group: []int64{3, 3, 3, 8, 8, 8, 3, 3, 3}}, BatchRows: batch}
		_, err := hmm.Fit(context.Background(), src, hmm.Config{K: 1})
		if !errors.Is(err, stream.ErrOrder) || !strings.Contains(err.Error(), "row 6") {
			t.Errorf("batch %d: got %v", batch, err)
		}
	}
}
