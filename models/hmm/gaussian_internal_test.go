package hmm

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// For a model of Gaussian states with their own variances, the posteriors
// and the log-likelihood (LogLikelihood, and the "ll" of a Baum–Welch
// pass) equal the sums over every state path of the densities
// N(x; O[j], Var[j]·I), with sequences cut across batches; rows far from
// every mean, whose densities underflow, still score.
func TestGaussianStatesBruteForce(t *testing.T) {
	m := tinyModel()
	m.Var = []float64{0.05, 0.2, 0.6}
	ids := []int64{7, 7, 7, 7, 7, 3, 3, 9, 9, 9, 9, 9}
	seqs := [][2]int{{0, 5}, {5, 7}, {7, 12}}
	x := []float64{0.5, 0.3, 0.2, 0.1, 0.1, 0.9, 0.2, 0.5, 0.2, 0.7, 0.2, 0.1, 0.3, 0.3, 0.3, 0.0, 0.6, 0.4,
		0.1, 0.2, 0.8, 0.6, 0.3, 0.0, 0.2, 0.2, 0.6, 0.4, 0.4, 0.1, 0.1, 0.6, 0.4, 0.9, 0.1, 0.2}
	dens := func(r, j int) float64 {
		var d2 float64
		for u := range m.D {
			e := x[r*m.D+u] - m.O[j][u]
			d2 += e * e
		}
		v := m.Var[j]
		return math.Exp(-d2/(2*v)) / math.Pow(2*math.Pi*v, float64(m.D)/2)
	}
	got := collect(t, m, x, ids)
	var want float64
	for _, s := range seqs {
		post := bruteForce(m, s[1]-s[0], func(tt, j int) float64 { return dens(s[0]+tt, j) })
		for tt, w := range post {
			for j := range w {
				if g := got[s[0]+tt][j]; math.Abs(g-w[j]) > 1e-12 {
					t.Fatalf("row %d state %d: %g, brute force %g", s[0]+tt, j, g, w[j])
				}
			}
		}
		want += math.Log(pathSum(m, s[1]-s[0], func(tt, j int) float64 { return dens(s[0]+tt, j) }))
	}
	src := &stream.MemoryDense{All: &stream.Dense{Rows: len(ids), Cols: m.D, Data: x, Group: ids}, BatchRows: 4}
	sc, err := LogLikelihood(context.Background(), m, src, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Rows != 12 || math.Abs(sc.LogLik-want/12) > 1e-12 {
		t.Fatalf("log-likelihood per row %.15f over %d rows, brute force %.15f", sc.LogLik, sc.Rows, want/12)
	}
	st, err := BWPass(m, 1, "").Run(context.Background(), src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ll := st.Sum("ll")[0]; math.Abs(ll-want) > 1e-11 {
		t.Fatalf("the pass's log-likelihood %.15f, brute force %.15f", ll, want)
	}
	// Rows 100 away from every mean: densities of e^-10⁴ and below, far
	// under the smallest float64, are scaled, not lost.
	far := make([]float64, len(x))
	for i, v := range x {
		far[i] = v + 100
	}
	sc, err = LogLikelihood(context.Background(), m, &stream.MemoryDense{All: &stream.Dense{Rows: len(ids), Cols: m.D, Data: far, Group: ids}, BatchRows: 4}, 1)
	if err != nil || math.IsInf(sc.LogLik, 0) || math.IsNaN(sc.LogLik) || sc.LogLik > -1e4 {
		t.Fatalf("far rows: %+v, %v", sc, err)
	}
}

// pathSum is the probability of n rows summed over every state path; b(t,
// j) is the emission density.
func pathSum(m *Model, n int, b func(t, j int) float64) float64 {
	var total float64
	var walk func(t, prev int, p float64)
	walk = func(t, prev int, p float64) {
		if t == n {
			total += p
			return
		}
		for j := range m.K {
			q := m.Pi[j]
			if t > 0 {
				q = m.T[j][prev]
			}
			walk(t+1, j, p*q*b(t, j))
		}
	}
	walk(0, 0, 1)
	return total
}
