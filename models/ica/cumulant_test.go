package ica

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// The streamed k²×k² cumulant agrees with a brute-force one computed from
// every whitened row (rounding-level tolerance), and K(I,I,I,v) and
// K(I,θ,θ,θ) agree with the explicit sums.
func TestCumulantBruteForce(t *testing.T) {
	const n, d, k = 300, 4, 3
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]float64, n*d)
	for i := range data {
		data[i] = r.ExpFloat64() - 0.5*r.Float64()
	}
	w := mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k {
			w.Set(i, j, r.NormFloat64())
		}
	}
	mean := []float64{0.1, -0.2, 0.3, 0}
	src := &stream.MemoryDense{All: &stream.Dense{Rows: n, Cols: d, Data: data}, BatchRows: 37}
	c, got, err := fourth(context.Background(), src, w, mean, 2)
	if err != nil || got != n {
		t.Fatal(err, got)
	}
	z := make([][]float64, n)
	s := mat.NewDense(k, k, nil)
	for i := range n {
		z[i] = make([]float64, k)
		for j := range k {
			for l := range d {
				z[i][j] += (data[i*d+l] - mean[l]) * w.At(l, j)
			}
		}
		for a := range k {
			for b := range k {
				s.Set(a, b, s.At(a, b)+z[i][a]*z[i][b]/n)
			}
		}
	}
	v := []float64{0.3, -0.5, 0.8}
	tv := contract(c, v)
	var worst float64
	for a := range k {
		for b := range k {
			for e := range k {
				var tsum float64
				for f := range k {
					var m4 float64
					for i := range n {
						m4 += z[i][a] * z[i][b] * z[i][e] * z[i][f] / n
					}
					want := m4 - s.At(a, b)*s.At(e, f) - s.At(a, e)*s.At(b, f) - s.At(a, f)*s.At(b, e)
					worst = math.Max(worst, math.Abs(want-c.m.At(a*k+b, e*k+f)))
					tsum += want * v[f]
				}
				worst = math.Max(worst, math.Abs(tsum-tv.At(a, b, e)))
			}
		}
	}
	if worst > 1e-9 {
		t.Fatalf("streamed and brute-force cumulants differ by %g", worst)
	}
	g := make([]float64, k)
	apply4(c, g, v)
	for a := range k {
		var want float64
		for b := range k {
			for e := range k {
				for f := range k {
					want += c.m.At(a*k+b, e*k+f) * v[b] * v[e] * v[f]
				}
			}
		}
		if math.Abs(want-g[a]) > 1e-9 {
			t.Fatalf("K(I,θ,θ,θ)[%d] = %g, want %g", a, g[a], want)
		}
	}
}
