package gmm

import (
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// BenchmarkEStep measures the E step of one batch of rows (its unit:
// rows/s), at the shapes of bench/dense: the pixels (d=3) and the digits
// (d=64), spherical and diagonal, k=20.
func BenchmarkEStep(b *testing.B) {
	for _, c := range []struct {
		name string
		d    int
		diag bool
	}{{"d3", 3, false}, {"d3-diag", 3, true}, {"d64", 64, false}, {"d64-diag", 64, true}} {
		b.Run(c.name, func(b *testing.B) {
			const k, n = 20, 4096
			rng := rand.New(rand.NewPCG(1, 2))
			m := &Mixture{Model: "gmm", K: k, D: c.d}
			if c.diag {
				m.Model = "gmm-diag"
			}
			width := 1
			if c.diag {
				width = c.d
			}
			for range k {
				m.Weights = append(m.Weights, 1.0/k)
				mu := make([]float64, c.d)
				for j := range mu {
					mu[j] = rng.NormFloat64()
				}
				v := make([]float64, width)
				for j := range v {
					v[j] = 0.5 + rng.Float64()
				}
				m.Means, m.Variances = append(m.Means, mu), append(m.Variances, v)
			}
			x := &stream.Dense{Rows: n, Cols: c.d, Data: make([]float64, n*c.d)}
			for i := range x.Data {
				x.Data[i] = rng.NormFloat64()
			}
			p := EMPass(m, 1e-6, 1, "bench")
			fn := p.Worker()
			out := [][]float64{make([]float64, k), make([]float64, k*c.d), make([]float64, k*width), make([]float64, 1)}
			b.ResetTimer()
			for range b.N {
				for _, o := range out {
					clear(o)
				}
				if err := fn(x, out, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
