package ica

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// The implicit contractions of the whitened fourth cumulant, K(I,I,I,v)
// (summed as a k×k×k tensor), K(I,θ,θ,θ) and K(θ,θ,θ,θ) (summed per
// pass), agree with the explicit k⁴ cumulant computed from every whitened row
// (rounding-level tolerance).
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
	v := []float64{0.3, -0.5, 0.8}
	theta := mat.NewDense(k, 2, []float64{0.2, 1, -0.4, 0.5, 0.9, -0.3})
	// The sums of the passes, batch by batch, as Plan's passes add them.
	s2, g3 := mat.NewSymDense(k, nil), solver.NewSym3(k)
	g4, q4 := mat.NewDense(k, 2, nil), make([]float64, 2)
	var scratch, y []float64
	mw := meanW(w, mean)
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		z := whitenBatch(b, w.RawMatrix(), mw, &scratch)
		addThird(z, v, s2.RawSymmetric(), g3, nil)
		addContract(z, theta.RawMatrix(), &y, g4.RawMatrix(), q4, nil)
	}
	tv, sz := finishThird(s2, g3, n, v)
	g, kappa := finishContract(g4, q4, n, sz, theta)
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
	cum := make([]float64, k*k*k*k)
	for a := range k {
		for b := range k {
			for e := range k {
				for f := range k {
					var m4 float64
					for i := range n {
						m4 += z[i][a] * z[i][b] * z[i][e] * z[i][f] / n
					}
					cum[((a*k+b)*k+e)*k+f] = m4 - s.At(a, b)*s.At(e, f) - s.At(a, e)*s.At(b, f) - s.At(a, f)*s.At(b, e)
				}
			}
		}
	}
	var worst float64
	for a := range k {
		for b := range k {
			for e := range k {
				var want float64
				for f := range k {
					want += cum[((a*k+b)*k+e)*k+f] * v[f]
				}
				worst = math.Max(worst, math.Abs(want-tv.At(a, b, e)))
			}
		}
	}
	for c := range 2 {
		th := mat.Col(nil, c, theta)
		var q float64
		for a := range k {
			var want float64
			for b := range k {
				for e := range k {
					for f := range k {
						want += cum[((a*k+b)*k+e)*k+f] * th[b] * th[e] * th[f]
					}
				}
			}
			worst = math.Max(worst, math.Abs(want-g.At(a, c)))
			q += want * th[a]
		}
		worst = math.Max(worst, math.Abs(q-kappa[c]))
	}
	if worst > 1e-9 {
		t.Fatalf("implicit and brute-force cumulant contractions differ by %g", worst)
	}
}

// TestCompleteColumns: the start the polishing steps take when the solver
// gave only some of the components keeps those columns as they are and
// adds orthonormal ones spanning the rest, the same for the same seed.
func TestCompleteColumns(t *testing.T) {
	const k = 6
	// Three orthonormal columns.
	var qr mat.QR
	qr.Factorize(mat.NewDense(k, 3, []float64{1, 2, 0, -1, 3, 1, 0, 1, 1, 2, 0, 4, 1, 1, 1, 5, 2, 0}))
	var q mat.Dense
	qr.QTo(&q)
	found := mat.DenseCopyOf(q.Slice(0, k, 0, 3))
	for _, c := range []*mat.Dense{found, nil} {
		got := completeColumns(c, k, 9)
		if c != nil {
			for i := range k {
				for j := range 3 {
					if got.At(i, j) != c.At(i, j) {
						t.Fatalf("column %d changed at row %d: %v, was %v", j, i, got.At(i, j), c.At(i, j))
					}
				}
			}
		}
		var g mat.Dense
		g.Mul(got.T(), got)
		for i := range k {
			for j := range k {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(g.At(i, j)-want) > 1e-12 {
					t.Fatalf("columns not orthonormal: (QᵀQ)[%d,%d] = %v", i, j, g.At(i, j))
				}
			}
		}
		if !mat.Equal(got, completeColumns(c, k, 9)) {
			t.Fatal("the same seed gave different columns")
		}
	}
}
