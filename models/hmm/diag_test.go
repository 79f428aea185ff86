package hmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
)

// diagGenerated draws seqs sequences of n steps from a chain of 3 states
// in d = 6 whose observations are Gaussian with a variance per
// coordinate: 0.3 on the even coordinates and 3 on the odd ones (10×
// apart, as log band energies differ), the same in every state. It
// returns the rows and the true model (VarDiag).
func diagGenerated(seed uint64, seqs, n int) (*stream.MemoryDense, *hmm.Model) {
	const k, d = 3, 6
	truth := &hmm.Model{Model: "hmm", K: k, D: d, Pi: []float64{0.5, 0.3, 0.2},
		T: [][]float64{{0.8, 0.1, 0.15}, {0.1, 0.75, 0.15}, {0.1, 0.15, 0.7}},
		O: [][]float64{{1.5, 0, 0, 3, 0.5, 0}, {0, 1.5, 0.5, 0, 0, 3}, {-0.5, 0, 1.5, -3, 0, 0}}}
	truth.VarDiag = make([][]float64, k)
	for j := range k {
		truth.VarDiag[j] = []float64{0.3, 3, 0.3, 3, 0.3, 3}
	}
	rng := rand.New(rand.NewPCG(seed, 0xd1a9))
	draw := func(p func(i int) float64) int {
		u, c := rng.Float64(), 0.0
		for i := range k - 1 {
			if c += p(i); u < c {
				return i
			}
		}
		return k - 1
	}
	all := &stream.Dense{Rows: seqs * n, Cols: d, Data: make([]float64, 0, seqs*n*d), Group: make([]int64, 0, seqs*n)}
	for s := range seqs {
		y := draw(func(i int) float64 { return truth.Pi[i] })
		for range n {
			for u := range d {
				all.Data = append(all.Data, truth.O[y][u]+math.Sqrt(truth.VarDiag[y][u])*rng.NormFloat64())
			}
			all.Group = append(all.Group, int64(s))
			prev := y
			y = draw(func(i int) float64 { return truth.T[i][prev] })
		}
	}
	return &stream.MemoryDense{All: all, BatchRows: 61}, truth
}

// diagFit is the fit of Gaussian sequences by the command line's flags
// args (models.Kind's), and the settings that made it.
func diagFit(t *testing.T, src stream.DenseSource, k, workers int, args ...string) (*hmm.Model, models.DenseSettings) {
	t.Helper()
	ds := hmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
	fs := flag.NewFlagSet("hmm", flag.ContinueOnError)
	ds.Flags(fs)
	if err := fs.Parse(append([]string{"--windows"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
		t.Fatal(err)
	}
	f, err := ds.Fit(context.Background(), src, models.Common{K: k, Seed: 1, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return f.(*hmm.Model), ds
}

// The log-likelihood per row of diagonal Baum–Welch passes never
// decreases, from the moment fit and from a poor start (means swapped,
// spherical variances far too small, made diagonal by Start).
func TestDiagBaumWelchNeverDecreases(t *testing.T) {
	ctx := context.Background()
	src, truth := diagGenerated(3, 300, 20)
	mom, err := hmm.Fit(ctx, src, hmm.Config{K: 3, Windows: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	poor := &hmm.Model{Model: "hmm", K: 3, D: 6, Pi: []float64{0.2, 0.3, 0.5},
		T: [][]float64{{0.5, 0.2, 0.3}, {0.25, 0.6, 0.3}, {0.25, 0.2, 0.4}},
		O: [][]float64{truth.O[1], truth.O[2], truth.O[0]}, Var: []float64{0.05, 0.05, 0.05}}
	for name, m := range map[string]*hmm.Model{"moments": mom, "poor": poor} {
		cfg := hmm.BWConfig{Passes: 25, Tol: -1, Gaussian: true, Diag: true}
		r, err := hmm.Refine(ctx, src, hmm.Start(m, cfg), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ll := r.BW.LogLik
		if len(ll) != 25 || r.Var != nil || len(r.VarDiag) != 3 || len(r.VarDiag[0]) != 6 {
			t.Fatalf("%s: %d passes, variances %v %v", name, len(ll), r.Var, r.VarDiag)
		}
		for i := 1; i < len(ll); i++ {
			if ll[i] < ll[i-1]-1e-10*math.Abs(ll[i-1]) {
				t.Fatalf("%s: pass %d: %.12f after %.12f", name, i+1, ll[i], ll[i-1])
			}
		}
		if !(ll[len(ll)-1] > ll[0]) {
			t.Fatalf("%s: no gain %v", name, ll)
		}
		t.Logf("%s: %.5f → %.5f per row, variances %.3f", name, ll[0], ll[len(ll)-1], r.VarDiag)
	}
}

// On sequences whose coordinates' variances differ by 10×, diagonal
// states recover the means and transitions at least as well as spherical
// ones, find the variances per coordinate, and score held-out sequences
// of the same chain higher.
func TestDiagBaumWelchRecovers(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{5, 6} {
		all, truth := diagGenerated(seed, 1200, 12)
		src, held := rowsOf(all, 0, 600*12), rowsOf(all, 600*12, 1200*12)
		sph, _ := diagFit(t, src, 3, 1)
		diag, _ := diagFit(t, src, 3, 1, "--covariance", "diag")
		if sph.Var == nil || sph.VarDiag != nil || diag.Var != nil || diag.VarDiag == nil {
			t.Fatalf("seed %d: spherical var %v var_diag %v; diagonal var %v var_diag %v", seed, sph.Var, sph.VarDiag, diag.Var, diag.VarDiag)
		}
		es, err := hmm.Eval(sph, truth)
		if err != nil {
			t.Fatal(err)
		}
		ed, err := hmm.Eval(diag, truth)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := hmm.LogLikelihood(ctx, sph, held, 1)
		if err != nil {
			t.Fatal(err)
		}
		ld, err := hmm.LogLikelihood(ctx, diag, held, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: spherical O %.4f T %.4f held-out %.4f (%d passes, var %.3f); diagonal O %.4f T %.4f held-out %.4f (%d passes)",
			seed, es.O, es.T, ls.LogLik, sph.Fit.EM.Passes, sph.Var, ed.O, ed.T, ld.LogLik, diag.Fit.EM.Passes)
		if ed.O > es.O+1e-9 || ed.T > es.T+1e-9 {
			t.Errorf("seed %d: errors O %.4f, T %.4f diagonal; %.4f, %.4f spherical", seed, ed.O, ed.T, es.O, es.T)
		}
		if !(ld.LogLik > ls.LogLik) {
			t.Errorf("seed %d: held-out log-likelihood per row %.4f diagonal, %.4f spherical", seed, ld.LogLik, ls.LogLik)
		}
		// The variances found, state by state (relabelled): within 15%.
		for i, j := range ed.Perm {
			for u, v := range diag.VarDiag[j] {
				if w := truth.VarDiag[i][u]; math.Abs(v-w) > 0.15*w {
					t.Errorf("seed %d: state %d coordinate %d: variance %.4f, true %g", seed, i, u, v, w)
				}
			}
		}
	}
}

// The diagonal fit is the same bytes whatever the workers and whether
// the passes read memory or the source; its file says var_diag, a
// spherical file does not; and the statistics of its passes over two
// shards cut at a sequence boundary merge into those of the whole.
func TestDiagBaumWelchDeterministicAndMerges(t *testing.T) {
	src, truth := diagGenerated(9, 80, 10)
	var first []byte
	for _, args := range [][]string{{}, {"--em-memory", "0"}} {
		for _, w := range []int{1, 2, 4} {
			bw, _ := diagFit(t, src, 3, w, append([]string{"--covariance", "diag", "--em-passes", "8", "--em-tol", "1e-12"}, args...)...)
			bw.ClearTiming()
			got, _ := json.Marshal(bw)
			if first == nil {
				first = got
				if !bytes.Contains(got, []byte(`"var_diag":[[`)) || bytes.Contains(got, []byte(`"var":`)) {
					t.Fatalf("not a diagonal model's file: %s", got)
				}
			} else if !bytes.Equal(got, first) {
				t.Fatalf("%d workers %v: another model", w, args)
			}
		}
	}
	sph, _ := diagFit(t, src, 3, 1, "--em-passes", "8", "--covariance", "spherical")
	if b, _ := json.Marshal(sph); bytes.Contains(b, []byte("var_diag")) || !bytes.Contains(b, []byte(`"var":[`)) {
		t.Fatalf("spherical file: %s", b)
	}
	start := &hmm.Model{Model: "hmm", K: 3, D: 6, O: truth.O, T: truth.T, Pi: truth.Pi, VarDiag: truth.VarDiag}
	cut := 200 // sequence 20 starts at row 200
	checkMergedPass(t, src, cut, "baum-welch", []string{"pi", "trans", "emit", "ll", "seqs", "occ", "sq"}, hmm.BWPass(start, 1, ""))
	checkMergedPass(t, src, cut, "start", []string{"resid_diag", "x", "sq_diag", "seqs"}, hmm.GaussianDiagStartPass(start, 1, ""))
}

// The diagonal Baum–Welch passes a pipeline runs a stage per pass of
// (models.Refinement, from the settings --covariance diag set) give
// Fit's model bit for bit.
func TestDiagRefinementIsFit(t *testing.T) {
	src, _ := diagGenerated(3, 300, 20)
	for _, k := range []int{3, 7} {
		f, ds := diagFit(t, src, k, 1, "--covariance", "diag", "--em-passes", "30")
		// The pipeline's settings travel as JSON (beamfit): decode them
		// into fresh settings.
		b, err := json.Marshal(ds)
		if err != nil {
			t.Fatal(err)
		}
		ds2 := hmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
		if err := json.Unmarshal(b, ds2); err != nil {
			t.Fatal(err)
		}
		c := models.Common{K: k, Seed: 1}
		r := models.RefinementOf(ds2, c)
		if r == nil {
			t.Fatal("no refinement")
		}
		m, passes := refineAsPipeline(t, r, src)
		m.ClearTiming()
		f.ClearTiming()
		got, _ := json.Marshal(m)
		want, _ := json.Marshal(f)
		if !bytes.Equal(got, want) {
			t.Errorf("k=%d: the refinement's model differs from Fit's:\n%s\n%s", k, got, want)
		}
		if !bytes.Contains(got, []byte(`"var_diag":[[`)) || passes != f.Fit.EM.Passes+1 || f.Fit.EM.Passes < 2 {
			t.Errorf("k=%d: %d passes, %d of Baum–Welch recorded: %s", k, passes, f.Fit.EM.Passes, got)
		}
	}
}

// --covariance diag is refused where no Baum–Welch pass of Gaussian
// states would fit the variances, and --covariance takes only spherical
// or diag.
func TestDiagFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		fromStats bool
		want      string
	}{
		{[]string{"--covariance", "diag", "--em-passes", "0"}, false, "--em-passes 0"},
		{[]string{"--covariance", "diag", "--discrete"}, false, "--discrete"},
		{[]string{"--covariance", "diag"}, true, "merged statistics"},
		{[]string{"--covariance", "full"}, false, "want spherical or diag"},
	} {
		ds := hmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
		fs := flag.NewFlagSet("hmm", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		ds.Flags(fs)
		err := fs.Parse(tc.args)
		if err == nil {
			err = ds.Check(models.Check{Given: models.Given(fs), FromStats: tc.fromStats})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

// A model file with both var and var_diag, or var_diag of the wrong
// shape, is refused.
func TestDiagModelFileChecked(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"both":  `{"model":"hmm","k":1,"d":2,"O":[[0,0]],"T":[[1]],"pi":[1],"var":[1],"var_diag":[[1,1]]}`,
		"short": `{"model":"hmm","k":1,"d":2,"O":[[0,0]],"T":[[1]],"pi":[1],"var_diag":[[1]]}`,
		"zero":  `{"model":"hmm","k":1,"d":2,"O":[[0,0]],"T":[[1]],"pi":[1],"var_diag":[[1,0]]}`,
	} {
		p := dir + "/" + name + ".json"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := hmm.Read(p); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	p := dir + "/ok.json"
	if err := os.WriteFile(p, []byte(`{"model":"hmm","k":1,"d":2,"O":[[0,0]],"T":[[1]],"pi":[1],"var_diag":[[1,2]]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := hmm.Read(p); err != nil || m.VarDiag[0][1] != 2 {
		t.Fatalf("%v %v", m, err)
	}
}
