package markov

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// randomSets makes sets of 3–8 real rows in d columns with increasing ids.
func randomSets(r *rand.Rand, sets, d int) *stream.Dense {
	all := &stream.Dense{Cols: d}
	for s := range sets {
		n := 3 + r.IntN(6)
		for range n {
			for range d {
				all.Data = append(all.Data, r.NormFloat64()+0.5)
			}
			all.Group = append(all.Group, int64(10*s+7))
			all.Rows++
		}
	}
	return all
}

// eachDistinct calls fn for every ordered tuple of m distinct row indices of
// the set [lo, hi).
func eachDistinct(lo, hi, m int, fn func(idx []int)) {
	idx := make([]int, m)
	var rec func(p int)
	rec = func(p int) {
		if p == m {
			fn(idx)
			return
		}
		for i := lo; i < hi; i++ {
			dup := false
			for _, j := range idx[:p] {
				dup = dup || j == i
			}
			if !dup {
				idx[p] = i
				rec(p + 1)
			}
		}
	}
	rec(0)
}

// The streamed set statistics equal the explicit averages over distinct
// within-set pairs and triples (docs/MATH.md §3.2), whatever the batch size (sets cut
// by batch boundaries are merged) and the number of workers; rounding-level
// tolerance.
func TestSetMomentsBruteForce(t *testing.T) {
	const d, k = 3, 2
	r := rand.New(rand.NewPCG(4, 5))
	all := randomSets(r, 23, d)
	wSet, wPoint := mat.NewDense(d, k, nil), mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k {
			wSet.Set(i, j, r.NormFloat64())
			wPoint.Set(i, j, r.NormFloat64())
		}
	}
	// Brute force.
	c2 := mat.NewDense(d, d, nil)
	c3 := make([]float64, k*k*k)
	v3 := make([]float64, k*k*k)
	v1 := make([]float64, d)
	v2 := mat.NewDense(d, d, nil)
	z := func(w *mat.Dense, i int) []float64 {
		out := make([]float64, k)
		for a := range k {
			for l := range d {
				out[a] += all.Row(i)[l] * w.At(l, a)
			}
		}
		return out
	}
	sets := 0
	lo := 0
	for i := 1; i <= all.Rows; i++ {
		if i < all.Rows && all.Group[i] == all.Group[lo] {
			continue
		}
		sets++
		n := float64(i - lo)
		eachDistinct(lo, i, 2, func(p []int) {
			for a := range d {
				for b := range d {
					c2.Set(a, b, c2.At(a, b)+all.Row(p[0])[a]*all.Row(p[1])[b]/(n*(n-1)))
				}
			}
		})
		eachDistinct(lo, i, 3, func(p []int) {
			x, y, w := z(wSet, p[0]), z(wSet, p[1]), z(wSet, p[2])
			for a := range k {
				for b := range k {
					for c := range k {
						c3[(a*k+b)*k+c] += x[a] * y[b] * w[c] / (n * (n - 1) * (n - 2))
					}
				}
			}
		})
		lo = i
	}
	for i := range all.Rows {
		x := all.Row(i)
		zp := z(wPoint, i)
		for a := range d {
			v1[a] += x[a] / float64(all.Rows)
			for b := range d {
				v2.Set(a, b, v2.At(a, b)+x[a]*x[b]/float64(all.Rows))
			}
		}
		for a := range k {
			for b := range k {
				for c := range k {
					v3[(a*k+b)*k+c] += zp[a] * zp[b] * zp[c] / float64(all.Rows)
				}
			}
		}
	}
	for _, batch := range []int{1, 4, 7, 1000} {
		for _, workers := range []int{1, 3} {
			src := &stream.MemoryDense{All: all, BatchRows: batch}
			ps, err := pairPass(context.Background(), src, d, workers, nil)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := triplePass(context.Background(), src, d, wSet, wPoint, workers)
			if err != nil {
				t.Fatal(err)
			}
			if ps.sets != int64(sets) || ts.sets != int64(sets) || ps.rows != int64(all.Rows) {
				t.Fatalf("batch %d: %d and %d sets, %d rows; want %d sets, %d rows", batch, ps.sets, ts.sets, ps.rows, sets, all.Rows)
			}
			var worst float64
			for a := range d {
				worst = math.Max(worst, math.Abs(ps.v1[a]-v1[a]))
				for b := range d {
					worst = math.Max(worst, math.Abs(ps.c2.At(a, b)-c2.At(a, b)/float64(sets)))
					worst = math.Max(worst, math.Abs(ps.v2.At(a, b)-v2.At(a, b)))
				}
			}
			for a := range k {
				for b := range k {
					for c := range k {
						worst = math.Max(worst, math.Abs(ts.c3.At(a, b, c)-c3[(a*k+b)*k+c]/float64(sets)))
						worst = math.Max(worst, math.Abs(ts.v3.At(a, b, c)-v3[(a*k+b)*k+c]))
					}
				}
			}
			if worst > 1e-12 {
				t.Errorf("batch %d, %d workers: streamed and brute-force moments differ by %g", batch, workers, worst)
			}
		}
	}
}

// Rows of a set that are not contiguous (an id that comes back) and ids out
// of order are errors naming the row, within a batch and across batches.
func TestSetOrder(t *testing.T) {
	data := make([]float64, 12)
	for i := range data {
		data[i] = float64(i)
	}
	for _, batch := range []int{2, 100} {
		for _, ids := range [][]int64{{1, 1, 1, 2, 2, 2, 1, 1, 1, 3, 3, 3}, {5, 5, 5, 2, 2, 2, 7, 7, 7, 8, 8, 8}} {
			src := &stream.MemoryDense{All: &stream.Dense{Rows: 12, Cols: 1, Data: data, Group: ids}, BatchRows: batch}
			_, err := pairPass(context.Background(), src, 1, 2, nil)
			if err == nil || !errors.Is(err, stream.ErrOrder) {
				t.Errorf("ids %v, batch %d: got %v, want an order error", ids, batch, err)
			}
		}
	}
}
