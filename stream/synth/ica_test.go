package synth

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

func collectRows(t *testing.T, src stream.DenseSource) *stream.Dense {
	t.Helper()
	all, err := stream.CollectDense(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// The rows must not depend on the worker count.
func TestICAReproducible(t *testing.T) {
	a, err := NewICA(ICAConfig{Rows: 3000, D: 4, K: 2, Seed: 3, BatchRows: 100, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewICA(ICAConfig{Rows: 3000, D: 4, K: 2, Seed: 3, BatchRows: 100, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	x, y := collectRows(t, a), collectRows(t, b)
	if x.Rows != 3000 || x.Cols != 4 {
		t.Fatalf("shape %d×%d", x.Rows, x.Cols)
	}
	for i, v := range x.Data {
		if v != y.Data[i] {
			t.Fatalf("value %d differs across worker counts", i)
		}
	}
	if _, err := NewICA(ICAConfig{Rows: 1, D: 2, K: 3}); err == nil {
		t.Fatal("k > d accepted")
	}
	if a.Truth.Kurtosis[0] >= 0 || a.Truth.Kurtosis[1] <= 0 {
		t.Fatalf("kurtoses %v should have mixed signs", a.Truth.Kurtosis)
	}
}

func TestHMMSeqLayout(t *testing.T) {
	g, err := NewHMMSeq(HMMSeqConfig{Seqs: 50, Len: 4, K: 2, D: 3, Discrete: true, Seed: 1, BatchRows: 7})
	if err != nil {
		t.Fatal(err)
	}
	x := collectRows(t, g)
	if x.Rows != 200 || len(x.Group) != 200 {
		t.Fatalf("%d rows, %d ids", x.Rows, len(x.Group))
	}
	for i := range x.Rows {
		if x.Group[i] != int64(i/4) {
			t.Fatalf("row %d has id %d, want %d", i, x.Group[i], i/4)
		}
		var s float64
		for _, v := range x.Row(i) {
			s += v
		}
		if s != 1 {
			t.Fatalf("row %d is not one-hot: %v", i, x.Row(i))
		}
	}
	for j := range 2 {
		var s float64
		for i := range 2 {
			s += g.Truth.T[i][j]
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("column %d of T sums to %g", j, s)
		}
	}
	if _, err := NewHMMSeq(HMMSeqConfig{Seqs: 1, Len: 2, K: 1, D: 1}); err == nil {
		t.Fatal("length 2 accepted")
	}
}

func TestMultiViewLayout(t *testing.T) {
	g, err := NewMultiView(MultiViewConfig{Rows: 10, Dims: [3]int{2, 3, 4}, K: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := collectRows(t, g)
	if x.Cols != 9 || g.Truth.Views[2][0] != 5 || len(g.Truth.Means[1][0]) != 3 {
		t.Fatalf("layout: %d cols, views %v", x.Cols, g.Truth.Views)
	}
	if _, err := NewMultiView(MultiViewConfig{Rows: 1, Dims: [3]int{1, 3, 3}, K: 2}); err == nil {
		t.Fatal("view narrower than k accepted")
	}
}
