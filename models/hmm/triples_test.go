package hmm

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// triples reads src in order through a seqReader, as the passes do, and
// hands fn the blocks of triples; it returns the numbers of rows and
// sequences.
func triples(ctx context.Context, src stream.DenseSource, d int, windows bool, fn func(int, blas64.General, blas64.General, blas64.General) error) (int64, int64, error) {
	r := newSeqReader(src.Info().Path, d, windows)
	var (
		rows int64
		seqs float64
		ferr error
	)
	call := func(x1, x2, x3 blas64.General) {
		if ferr == nil {
			ferr = fn(0, x1, x2, x3)
		}
	}
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return rows, int64(seqs), err
		}
		rows += int64(b.Rows)
		err := r.batch(b, call, &seqs, func() error { return nil })
		b.Release()
		if err != nil {
			return rows, int64(seqs), err
		}
	}
	if err := r.batch(nil, call, &seqs, func() error { return nil }); err != nil {
		return rows, int64(seqs), err
	}
	return rows, int64(seqs), ferr
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
