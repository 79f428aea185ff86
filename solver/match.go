package solver

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// MatchColumns pairs each column of truth with a distinct column of est by
// greedily taking the largest |cosine| first, and returns, per truth column,
// the index of its match (−1 when est has too few columns) and the
// sign-corrected distance min(‖u − û‖, ‖u + û‖) after normalising both.
// Greedy matching is exact when the estimates are close to distinct truths,
// which is the regime the benchmarks measure.
func MatchColumns(truth, est *mat.Dense) (match []int, dist []float64) {
	d, kt := truth.Dims()
	de, ke := est.Dims()
	if d != de {
		panic("solver: MatchColumns: row counts differ")
	}
	var g mat.Dense
	g.Mul(truth.T(), est)
	tn := colNorms(truth)
	en := colNorms(est)
	match = make([]int, kt)
	dist = make([]float64, kt)
	for i := range match {
		match[i] = -1
		dist[i] = math.NaN()
	}
	usedT := make([]bool, kt)
	usedE := make([]bool, ke)
	for n := 0; n < min(kt, ke); n++ {
		bi, bj, bc := -1, -1, -1.0
		for i := 0; i < kt; i++ {
			if usedT[i] {
				continue
			}
			for j := 0; j < ke; j++ {
				if usedE[j] {
					continue
				}
				c := math.Abs(g.At(i, j)) / (tn[i]*en[j] + 1e-300)
				if c > bc {
					bi, bj, bc = i, j, c
				}
			}
		}
		usedT[bi], usedE[bj] = true, true
		match[bi] = bj
		// Direct difference rather than √(2−2cos), which loses half the digits.
		sign := math.Copysign(1, g.At(bi, bj))
		s := 0.0
		for p := 0; p < d; p++ {
			x := truth.At(p, bi)/tn[bi] - sign*est.At(p, bj)/en[bj]
			s += x * x
		}
		dist[bi] = math.Sqrt(s)
	}
	return match, dist
}

func colNorms(m *mat.Dense) []float64 {
	_, c := m.Dims()
	n := make([]float64, c)
	for j := range n {
		n[j] = mat.Norm(m.ColView(j), 2)
	}
	return n
}
