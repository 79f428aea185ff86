package gmm_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
)

// diagTruth is a mixture of three components in d=4 whose features have
// variances from 0.2 to 4, differing by component and feature: no
// spherical mixture of three components is it.
func diagTruth() *gmm.Model {
	return &gmm.Model{Model: "gmm", Covariance: gmm.CovDiag, K: 3, D: 4,
		Weights: []float64{0.5, 0.3, 0.2},
		Means:   [][]float64{{0, 0, 0, 0}, {8, -6, 4, 10}, {-8, 7, -9, 3}},
		Diag:    [][]float64{{4, 0.2, 1, 2.5}, {0.3, 3, 0.5, 1}, {1.5, 0.25, 4, 0.4}}}
}

// drawDiag draws n rows of m (diagonal) with seed, in batches of 500.
func drawDiag(m *gmm.Model, n int, seed uint64) *stream.MemoryDense {
	r := rand.New(rand.NewPCG(seed, 7))
	all := &stream.Dense{Rows: n, Cols: m.D, Data: make([]float64, 0, n*m.D)}
	for range n {
		u, i := r.Float64(), 0
		for ; i < m.K-1 && u >= m.Weights[i]; i++ {
			u -= m.Weights[i]
		}
		for j := range m.D {
			all.Data = append(all.Data, m.Means[i][j]+math.Sqrt(m.Variance(i, j))*r.NormFloat64())
		}
	}
	return &stream.MemoryDense{All: all, BatchRows: 500}
}

// A diagonal fit (EM.Diag) of rows drawn from a diagonal mixture recovers
// its variances per component and feature against the truth, its passes'
// log-likelihood never falls, and it scores held-out rows higher than
// the spherical fit of the same rows.
func TestDiagRecoversFeatureVariances(t *testing.T) {
	ctx := context.Background()
	truth := diagTruth()
	train, test := drawDiag(truth, 12000, 1), drawDiag(truth, 4000, 2)
	fit := func(diag bool) *gmm.Model {
		cfg := gmm.DefaultConfig(3)
		cfg.EM.Diag = diag
		m, err := gmm.Fit(ctx, train, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	d, s := fit(true), fit(false)
	if !d.IsDiag() || d.Variances != nil || len(d.Diag) != 3 || s.IsDiag() {
		t.Fatalf("diag fit: covariance %q, %d rows of variances; spherical fit: covariance %q", d.Covariance, len(d.Diag), s.Covariance)
	}
	ev, err := gmm.Eval(d, truth)
	if err != nil {
		t.Fatal(err)
	}
	// About 12000·wᵢ rows per component: a variance's relative standard
	// error is √(2/nᵢ) ≤ 0.03, so the largest of 12 stays below 0.15.
	t.Logf("diag: means %.4f, weights %.4f, variances %.4f (max rel. error over components and features)", ev.Means, ev.Weights, ev.Variances)
	if ev.Means > 0.02 || ev.Weights > 0.03 || ev.Variances > 0.15 {
		t.Errorf("diag fit against the truth: means %.4f, weights %.4f, variances %.4f", ev.Means, ev.Weights, ev.Variances)
	}
	ll := d.Fit.EM.LogLik
	for i := 1; i < len(ll); i++ {
		if ll[i] < ll[i-1]-1e-12*math.Abs(ll[i-1]) {
			t.Errorf("the log-likelihood fell at pass %d: %v", i+1, ll)
		}
	}
	ld, err := gmm.LogLikelihood(ctx, d, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := gmm.LogLikelihood(ctx, s, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := gmm.LogLikelihood(ctx, truth, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out log-likelihood per row: diag %.4f, spherical %.4f, truth %.4f", ld.LogLik, ls.LogLik, lt.LogLik)
	if ld.Rows != 4000 || !(ld.LogLik > ls.LogLik+0.1) || math.Abs(ld.LogLik-lt.LogLik) > 0.02 {
		t.Errorf("held out (%d rows): diag %.4f, spherical %.4f, truth %.4f", ld.Rows, ld.LogLik, ls.LogLik, lt.LogLik)
	}
}

// LogLikelihood is the average of log Σᵢ wᵢ N(x; μᵢ, diag(σᵢ²)) computed
// directly, row by row, whatever the workers.
func TestLogLikelihoodBruteForce(t *testing.T) {
	ctx := context.Background()
	m := diagTruth()
	src := drawDiag(m, 1500, 5)
	src.BatchRows = 1500 // one batch: three workers split it
	var want float64
	for r := range src.All.Rows {
		x := src.All.Data[r*m.D : (r+1)*m.D]
		var p float64
		for i := range m.K {
			dens := m.Weights[i]
			for j, v := range x {
				s2 := m.Diag[i][j]
				dens *= math.Exp(-(v-m.Means[i][j])*(v-m.Means[i][j])/(2*s2)) / math.Sqrt(2*math.Pi*s2)
			}
			p += dens
		}
		want += math.Log(p)
	}
	want /= float64(src.All.Rows)
	var first float64
	for _, w := range []int{1, 3} {
		got, err := gmm.LogLikelihood(ctx, m, src, w)
		if err != nil {
			t.Fatal(err)
		}
		// Rounding of 1500 terms of magnitude ~10 in two orders.
		if math.Abs(got.LogLik-want) > 1e-10 {
			t.Errorf("workers %d: %.12f, brute force %.12f", w, got.LogLik, want)
		}
		if w == 1 {
			first = got.LogLik
		} else if got.LogLik != first {
			t.Errorf("workers 3 gives %v, 1 gives %v", got.LogLik, first)
		}
	}
}

// A diagonal model's file says so and reads back the same; a spherical
// model's file has no "covariance" field and reads as before; files that
// contradict their covariance are refused with what they should hold.
func TestDiagModelFile(t *testing.T) {
	dir := t.TempDir()
	m := diagTruth()
	m.Fit = &gmm.FitRecord{Rows: 10, Passes: 2, Method: "exact", EM: &gmm.EMRun{Passes: 3, LogLik: []float64{-3, -2, -1}, Converged: true}}
	p := filepath.Join(dir, "diag.json")
	if err := m.Write(p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !bytes.Contains(b, []byte(`"covariance": "diag"`)) {
		t.Errorf("no covariance in the diagonal model's file:\n%s", b)
	}
	back, err := gmm.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	back.Fit.EM.Rows = m.Fit.EM.Rows
	if !reflect.DeepEqual(back, m) {
		t.Errorf("read back %+v, wrote %+v", back, m)
	}

	// A spherical file of the layout before diagonal mixtures.
	old := `{"model": "gmm", "k": 2, "d": 2, "weights": [0.5, 0.5], "means": [[0, 1], [2, 3]], "variances": [1, 2]}`
	sp := filepath.Join(dir, "sph.json")
	os.WriteFile(sp, []byte(old), 0o644)
	s, err := gmm.Read(sp)
	if err != nil || s.IsDiag() || !reflect.DeepEqual(s.Variances, []float64{1, 2}) || s.Variance(1, 0) != 2 {
		t.Fatalf("spherical file: %+v, %v", s, err)
	}
	if err := s.Write(sp); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(sp); bytes.Contains(b, []byte("covariance")) {
		t.Errorf("a spherical model's file names a covariance:\n%s", b)
	}

	for _, c := range []struct{ name, json, want string }{
		{"unknown", `{"model": "gmm", "covariance": "full", "k": 1, "d": 1, "weights": [1], "means": [[0]], "variances": [1]}`, `covariance "full"`},
		{"flat", `{"model": "gmm", "covariance": "diag", "k": 1, "d": 2, "weights": [1], "means": [[0, 0]], "variances": [1]}`, "k rows of d variances"},
		{"short", `{"model": "gmm", "covariance": "diag", "k": 1, "d": 2, "weights": [1], "means": [[0, 0]], "variances": [[1]]}`, "component 0 has 1 variances, d=2"},
		{"nested", `{"model": "gmm", "k": 1, "d": 2, "weights": [1], "means": [[0, 0]], "variances": [[1, 1]]}`, "one variance per component"},
	} {
		bad := filepath.Join(dir, c.name+".json")
		os.WriteFile(bad, []byte(c.json), 0o644)
		if _, err := gmm.Read(bad); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
}
