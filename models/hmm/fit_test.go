package hmm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

func truthModel(t synth.HMMSeqTruth) *Model {
	return &Model{Model: t.Model, K: t.K, D: t.D, O: t.O, T: t.T, Pi: t.Pi}
}

// One triple per sequence: with 100000 sequences the cross moments carry
// errors near 1/√n ≈ 0.003 per entry; T = O⁺(OT) and π = T⁻¹w divide by the
// conditioning of O and T (a few), so T and π get the looser tolerances.
func TestFitRecovers(t *testing.T) {
	cases := []struct {
		name          string
		gen           synth.HMMSeqConfig
		cfg           Config
		tolO, tolT, p float64
	}{
		{"gaussian", synth.HMMSeqConfig{Seqs: 60000, Len: 3, K: 3, D: 6, Seed: 1}, Config{K: 3, Seed: 2}, 0.03, 0.08, 0.08},
		{"discrete", synth.HMMSeqConfig{Seqs: 400000, Len: 3, K: 3, D: 8, Discrete: true, Seed: 4}, Config{K: 3, Discrete: true, Seed: 2}, 0.08, 0.15, 0.15},
		// With windows π is the average state distribution of the window starts, not
		// the initial one, so it is not compared.
		{"discrete-windows", synth.HMMSeqConfig{Seqs: 20000, Len: 20, K: 3, D: 8, Discrete: true, Seed: 6}, Config{K: 3, Discrete: true, Windows: true, Seed: 2}, 0.08, 0.15, -1},
		{"windows", synth.HMMSeqConfig{Seqs: 4000, Len: 30, K: 3, D: 6, Seed: 5}, Config{K: 3, Windows: true, Seed: 2}, 0.03, 0.08, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := synth.NewHMMSeq(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Fit(context.Background(), src, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := Eval(m, truthModel(src.Truth))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("O %.4f T %.4f pi %.4f triples %d sequences %d projected %.3f w %.3f white %.3g", ev.O, ev.T, ev.Pi, m.Stats.Triples, m.Stats.Sequences, m.Stats.Projected, m.Stats.W, m.Stats.Whitening)
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
	a, err := Fit(context.Background(), src, Config{K: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(context.Background(), src, Config{K: 2, Seed: 1})
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
	cases := []struct {
		name string
		src  stream.DenseSource
		k    int
		want string
		is   error
	}{
		{"nan", mk([]int64{0, 0, 0, 1, 1, 1, 1}, 5), 1, "row 5", stream.ErrValue},
		{"no-id", noID, 1, "no sequence id", stream.ErrSchema},
		{"short-middle", mk([]int64{0, 0, 0, 1, 1, 2, 2, 2}, -1), 1, "sequence 1 has 2 rows", ErrShort},
		{"short-last", mk([]int64{0, 0, 0, 0, 0, 7}, -1), 1, "sequence 7 has 1 rows", ErrShort},
		{"k>d", mk([]int64{0, 0, 0}, -1), 4, "k ≤ d", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Fit(context.Background(), c.src, Config{K: c.k})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v is not %v", err, c.is)
			}
		})
	}
}

// TestTriples checks the window extraction against a hand-made sequence.
func TestTriples(t *testing.T) {
	ids := []int64{0, 0, 0, 0, 1, 1, 1}
	data := []float64{1, 2, 3, 4, 10, 20, 30}
	src := &stream.MemoryDense{All: &stream.Dense{Rows: 7, Cols: 1, Data: data, Group: ids}, BatchRows: 2}
	for _, c := range []struct {
		windows bool
		want    [][3]float64
	}{
		{false, [][3]float64{{1, 2, 3}, {10, 20, 30}}},
		{true, [][3]float64{{1, 2, 3}, {2, 3, 4}, {10, 20, 30}}},
	} {
		var got [][3]float64
		_, seqs, err := triples(context.Background(), src, 1, c.windows, func(_ int, x1, x2, x3 blas64.General) error {
			for i := range x1.Rows {
				got = append(got, [3]float64{x1.Data[i], x2.Data[i], x3.Data[i]})
			}
			return nil
		})
		if err != nil || seqs != 2 {
			t.Fatalf("windows=%v: %v, %d sequences", c.windows, err, seqs)
		}
		if len(got) != len(c.want) {
			t.Fatalf("windows=%v: got %v, want %v", c.windows, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("windows=%v: got %v, want %v", c.windows, got, c.want)
			}
		}
	}
}

// A sequence whose rows are not contiguous (its id comes back after another
// one) is an order error naming the row.
func TestNonContiguousSequence(t *testing.T) {
	data := make([]float64, 9)
	for _, batch := range []int{2, 100} {
		src := &stream.MemoryDense{All: &stream.Dense{Rows: 9, Cols: 1, Data: data, Group: []int64{3, 3, 3, 8, 8, 8, 3, 3, 3}}, BatchRows: batch}
		_, err := Fit(context.Background(), src, Config{K: 1})
		if !errors.Is(err, stream.ErrOrder) || !strings.Contains(err.Error(), "row 6") {
			t.Errorf("batch %d: got %v", batch, err)
		}
	}
}

// The cross moments of the triples extracted from sequences (first three
// steps, or every window) equal the explicit sums over the sequences.
func TestCrossMomentsBruteForce(t *testing.T) {
	const d = 2
	r := rand.New(rand.NewPCG(2, 3))
	lens := []int{3, 5, 4, 7}
	var all stream.Dense
	all.Cols = d
	for s, l := range lens {
		for range l {
			all.Data = append(all.Data, r.NormFloat64(), r.NormFloat64()+1)
			all.Group = append(all.Group, int64(s))
			all.Rows++
		}
	}
	for _, windows := range []bool{false, true} {
		src := &stream.MemoryDense{All: &all, BatchRows: 3}
		pass := func(ctx context.Context, _ int, fn func(int, blas64.General, blas64.General, blas64.General) error) error {
			_, _, err := triples(ctx, src, d, windows, fn)
			return err
		}
		e12, e32, e31, n, err := multiview.CrossMoments(context.Background(), pass, [3]int{d, d, d}, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := [3]*mat.Dense{mat.NewDense(d, d, nil), mat.NewDense(d, d, nil), mat.NewDense(d, d, nil)}
		var count int
		start := 0
		for _, l := range lens {
			for s := 0; s+3 <= l && (windows || s == 0); s++ {
				count++
				x := func(o int) []float64 { return all.Row(start + s + o) }
				for a := range d {
					for b := range d {
						want[0].Set(a, b, want[0].At(a, b)+x(0)[a]*x(1)[b])
						want[1].Set(a, b, want[1].At(a, b)+x(2)[a]*x(1)[b])
						want[2].Set(a, b, want[2].At(a, b)+x(2)[a]*x(0)[b])
					}
				}
			}
			start += l
		}
		if int(n) != count {
			t.Fatalf("windows=%v: %d triples, want %d", windows, n, count)
		}
		for i, e := range []*mat.Dense{e12, e32, e31} {
			want[i].Scale(1/float64(count), want[i])
			if !mat.EqualApprox(e, want[i], 1e-12) {
				t.Errorf("windows=%v: moment %d is %v, want %v", windows, i, mat.Formatted(e), mat.Formatted(want[i]))
			}
		}
	}
}
