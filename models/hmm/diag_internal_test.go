package hmm

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// For a model of diagonal Gaussian states, the posteriors and the
// log-likelihood (LogLikelihood, and the "ll" of a Baum–Welch pass) equal
// the sums over every state path of the densities Π_c N(x_c; O[j][c],
// VarDiag[j][c]), with sequences cut across batches; rows far from every
// mean, whose densities underflow, still score.
func TestDiagGaussianStatesBruteForce(t *testing.T) {
	m := tinyModel()
	m.VarDiag = [][]float64{{0.05, 0.5, 0.1}, {0.2, 0.02, 0.9}, {0.6, 0.3, 0.04}}
	ids := []int64{7, 7, 7, 7, 7, 3, 3, 9, 9, 9, 9, 9}
	seqs := [][2]int{{0, 5}, {5, 7}, {7, 12}}
	x := []float64{0.5, 0.3, 0.2, 0.1, 0.1, 0.9, 0.2, 0.5, 0.2, 0.7, 0.2, 0.1, 0.3, 0.3, 0.3, 0.0, 0.6, 0.4,
		0.1, 0.2, 0.8, 0.6, 0.3, 0.0, 0.2, 0.2, 0.6, 0.4, 0.4, 0.1, 0.1, 0.6, 0.4, 0.9, 0.1, 0.2}
	dens := func(r, j int) float64 {
		p := 1.0
		for u := range m.D {
			e := x[r*m.D+u] - m.O[j][u]
			v := m.VarDiag[j][u]
			p *= math.Exp(-e*e/(2*v)) / math.Sqrt(2*math.Pi*v)
		}
		return p
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
	// The spherical model of the same means scores otherwise: the
	// variances per coordinate are used.
	sph := tinyModel()
	sph.Var = []float64{0.2, 0.2, 0.2}
	if s2, err := LogLikelihood(context.Background(), sph, src, 1); err != nil || math.Abs(s2.LogLik-sc.LogLik) < 1e-3 {
		t.Fatalf("spherical %+v %v, diagonal %.6f", s2, err, sc.LogLik)
	}
	st, err := BWPass(m, 1, "").Run(context.Background(), src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ll := st.Sum("ll")[0]; math.Abs(ll-want) > 1e-11 {
		t.Fatalf("the pass's log-likelihood %.15f, brute force %.15f", ll, want)
	}
	if len(st.Sum("sq")) != m.K*m.D {
		t.Fatalf("sq has %d sums, want k·d = %d", len(st.Sum("sq")), m.K*m.D)
	}
	far := make([]float64, len(x))
	for i, v := range x {
		far[i] = v + 100
	}
	sc, err = LogLikelihood(context.Background(), m, &stream.MemoryDense{All: &stream.Dense{Rows: len(ids), Cols: m.D, Data: far, Group: ids}, BatchRows: 4}, 1)
	if err != nil || math.IsInf(sc.LogLik, 0) || math.IsNaN(sc.LogLik) || sc.LogLik > -1e4 {
		t.Fatalf("far rows: %+v, %v", sc, err)
	}
}

// Each coordinate's floor is relative to its own variance: a constant
// coordinate's is the least positive 1e-300, a narrow one's a millionth
// of its own spread, not of the others'.
func TestDiagFloor(t *testing.T) {
	x := []float64{2, 4, 0}
	sq := []float64{2, 8 + 1e-9, 2e6}
	f := diagFloor(x, sq, 2)
	if f[0] != 1e-300 || math.Abs(f[1]/5e-16-1) > 1e-6 || math.Abs(f[2]-1) > 1e-12 {
		t.Fatalf("floors %v", f)
	}
}
