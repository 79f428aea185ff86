package multiview

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// blockPass hands the triples (x1[i], x2[i], x3[i]) to fn in blocks of 7,
// round-robin over the workers.
func blockPass(x [3]*mat.Dense) Pass {
	return func(ctx context.Context, workers int, fn func(int, blas64.General, blas64.General, blas64.General) error) error {
		n, _ := x[0].Dims()
		for lo, b := 0, 0; lo < n; lo, b = lo+7, b+1 {
			hi := min(lo+7, n)
			var g [3]blas64.General
			for t := range 3 {
				g[t] = mat.DenseCopyOf(x[t].Slice(lo, hi, 0, x[t].RawMatrix().Cols)).RawMatrix()
			}
			if err := fn(b%workers, g[0], g[1], g[2]); err != nil {
				return err
			}
		}
		return nil
	}
}

// The streamed cross moments and the whitened, symmetrised third moment equal
// the explicit averages over the triples (rounding-level tolerance).
func TestMomentsBruteForce(t *testing.T) {
	const n, k = 50, 2
	dims := [3]int{3, 4, 2}
	r := rand.New(rand.NewPCG(3, 9))
	var x, p [3]*mat.Dense
	for v, d := range dims {
		x[v] = mat.NewDense(n, d, nil)
		p[v] = mat.NewDense(d, k, nil)
		for i := range n {
			for j := range d {
				x[v].Set(i, j, r.NormFloat64()+float64(j))
			}
		}
		for i := range d {
			for j := range k {
				p[v].Set(i, j, r.NormFloat64())
			}
		}
	}
	pass := blockPass(x)
	e12, e32, e31, got, err := CrossMoments(context.Background(), pass, dims, 3)
	if err != nil || got != n {
		t.Fatal(err, got)
	}
	var worst float64
	for _, c := range []struct {
		e    *mat.Dense
		a, b int
	}{{e12, 0, 1}, {e32, 2, 1}, {e31, 2, 0}} {
		for i := range dims[c.a] {
			for j := range dims[c.b] {
				var s float64
				for l := range n {
					s += x[c.a].At(l, i) * x[c.b].At(l, j) / n
				}
				worst = math.Max(worst, math.Abs(s-c.e.At(i, j)))
			}
		}
	}
	tt, got, err := whitenedTriple(context.Background(), pass, p[0], p[1], p[2], 2)
	if err != nil || got != n {
		t.Fatal(err, got)
	}
	var z [3]mat.Dense
	for v := range 3 {
		z[v].Mul(x[v], p[v])
	}
	raw := func(a, b, c int) float64 {
		var s float64
		for l := range n {
			s += z[0].At(l, a) * z[1].At(l, b) * z[2].At(l, c) / n
		}
		return s
	}
	for a := range k {
		for b := range k {
			for c := range k {
				sym := (raw(a, b, c) + raw(a, c, b) + raw(b, a, c) + raw(b, c, a) + raw(c, a, b) + raw(c, b, a)) / 6
				worst = math.Max(worst, math.Abs(sym-tt.At(a, b, c)))
			}
		}
	}
	if worst > 1e-12 {
		t.Errorf("streamed and brute-force moments differ by %g", worst)
	}
}

// A fit whose views differ from the truth's gets an error naming both and
// the Views value that would match.
func TestEvalMismatchedViews(t *testing.T) {
	mk := func(views [][]int) *Model {
		m := &Model{Model: "multiview", K: 1, D: 6, Views: views, Weights: []float64{1}, Means: make([][][]float64, 3)}
		for v := range 3 {
			m.Means[v] = [][]float64{make([]float64, len(views[v]))}
		}
		return m
	}
	_, err := Eval(mk([][]int{{0, 1}, {2, 3}, {4, 5}}), mk([][]int{{0, 2}, {1, 3}, {4, 5}}))
	if err == nil || !strings.Contains(err.Error(), `Views "0,2;1,3;4,5"`) || !strings.Contains(err.Error(), "view 1") {
		t.Errorf("got %v", err)
	}
}
