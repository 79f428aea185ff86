package gmm

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// The streamed, whitened and noise-corrected M3 of docs/MATH.md §3.6 equals the
// explicit d×d×d tensor M3 = E[x⊗3] − Sym3(M1, I) contracted with W on every
// mode, for both M1 = σ²E[x] and the differing-variance M1 of 004 Thm 3.3
// (itself checked against a direct sum); rounding-level tolerance.
func TestCorrectedThirdBruteForce(t *testing.T) {
	const n, d, k = 200, 5, 3
	r := rand.New(rand.NewPCG(7, 8))
	data := make([]float64, n*d)
	for i := range data {
		data[i] = r.NormFloat64() + float64(i%d)/3
	}
	// W = U diag(white)^{-1/2} with orthonormal U, as Fit builds it.
	var qr mat.QR
	g := mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k {
			g.Set(i, j, r.NormFloat64())
		}
	}
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	white := []float64{2, 0.7, 1.3}
	w := mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k {
			w.Set(i, j, q.At(i, j)/math.Sqrt(white[j]))
		}
	}
	qc := mat.DenseCopyOf(q.Slice(0, d, 0, k-1)) // any orthonormal d×(k−1)
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += data[i*d+j] / n
		}
	}
	sp := &spectrum{n: n, mean: mean, sigma2: 0.8}
	for _, differing := range []bool{false, true} {
		src := &stream.MemoryDense{All: &stream.Dense{Rows: n, Cols: d, Data: data}, BatchRows: 33}
		var qq *mat.Dense
		if differing {
			qq = qc
		}
		tm := &thirdMoments{n: n, t: solver.NewSym3(k)}
		if differing {
			tm.m1 = make([]float64, d)
		}
		tb := newThirdBatch(w, qq, mean)
		for b, err := range src.Rows(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			tb.add(b, tm.t, tm.m1)
		}
		got, _ := correctedThird(tm, w, white, sp, differing)
		// Brute force: M1, then M3 over all d³ entries, then W on each mode.
		m1 := make([]float64, d)
		for i := range n {
			x := data[i*d : (i+1)*d]
			if !differing {
				m1 = nil
				break
			}
			var e float64 // ‖(I − QcQcᵀ)(x − m)‖²
			res := make([]float64, d)
			for a := range d {
				res[a] = x[a] - mean[a]
			}
			for c := range k - 1 {
				var p float64
				for a := range d {
					p += qc.At(a, c) * (x[a] - mean[a])
				}
				for a := range d {
					res[a] -= p * qc.At(a, c)
				}
			}
			for _, v := range res {
				e += v * v
			}
			for a := range d {
				m1[a] += x[a] * e / (n * float64(d-k+1))
			}
		}
		if m1 == nil {
			m1 = make([]float64, d)
			for a := range d {
				m1[a] = sp.sigma2 * mean[a]
			}
		}
		m3 := make([]float64, d*d*d)
		for i := range n {
			x := data[i*d : (i+1)*d]
			for a := range d {
				for b := range d {
					for c := range d {
						m3[(a*d+b)*d+c] += x[a] * x[b] * x[c] / n
					}
				}
			}
		}
		delta := func(a, b int) float64 {
			if a == b {
				return 1
			}
			return 0
		}
		for a := range d {
			for b := range d {
				for c := range d {
					m3[(a*d+b)*d+c] -= m1[a]*delta(b, c) + m1[b]*delta(a, c) + m1[c]*delta(a, b)
				}
			}
		}
		var worst float64
		for i := range k {
			for j := range k {
				for l := range k {
					var s float64
					for a := range d {
						for b := range d {
							for c := range d {
								s += m3[(a*d+b)*d+c] * w.At(a, i) * w.At(b, j) * w.At(c, l)
							}
						}
					}
					worst = math.Max(worst, math.Abs(s-got.At(i, j, l)))
				}
			}
		}
		if worst > 1e-10 {
			t.Errorf("differing=%v: streamed and explicit whitened M3 differ by %g", differing, worst)
		}
	}
}
