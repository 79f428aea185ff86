package hmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// gaussianFit is the moment fit of Gaussian sequences and its Baum–Welch
// refinement of at most passes passes.
func gaussianFit(t *testing.T, src stream.DenseSource, k, passes int, tol float64, workers int) (mom, bw *hmm.Model) {
	t.Helper()
	ctx := context.Background()
	cfg := hmm.Config{K: k, Windows: true, Seed: 1, Workers: workers}
	mom, err := hmm.Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.EM = &hmm.BWConfig{Passes: passes, Tol: tol}
	bw, err = hmm.Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return mom, bw
}

// The log-likelihood per row of Gaussian Baum–Welch passes never
// decreases, from the moment fit and from a poor start whose means are
// swapped and whose variances are far too small; every state gets a
// variance, and the passes gain.
func TestGaussianBaumWelchNeverDecreases(t *testing.T) {
	ctx := context.Background()
	src, truth := generated(t, synth.HMMSeqConfig{Seqs: 300, Len: 20, K: 3, D: 6, Sigma2: 1, Seed: 3}, 97)
	mom, err := hmm.Fit(ctx, src, hmm.Config{K: 3, Windows: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	poor := &hmm.Model{Model: "hmm", K: 3, D: 6, Pi: []float64{0.2, 0.3, 0.5},
		T: [][]float64{{0.5, 0.2, 0.3}, {0.25, 0.6, 0.3}, {0.25, 0.2, 0.4}},
		O: [][]float64{truth.O[1], truth.O[2], truth.O[0]}, Var: []float64{0.05, 0.05, 0.05}}
	for name, m := range map[string]*hmm.Model{"moments": mom, "poor": poor} {
		cfg := hmm.BWConfig{Passes: 25, Tol: -1, Gaussian: true}
		r, err := hmm.Refine(ctx, src, hmm.Start(m, cfg), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ll := r.BW.LogLik
		if len(ll) != 25 || len(r.Var) != 3 {
			t.Fatalf("%s: %d passes, variances %v", name, len(ll), r.Var)
		}
		for i := 1; i < len(ll); i++ {
			if ll[i] < ll[i-1]-1e-10*math.Abs(ll[i-1]) {
				t.Fatalf("%s: pass %d: %.12f after %.12f", name, i+1, ll[i], ll[i-1])
			}
		}
		if !(ll[len(ll)-1] > ll[0]) {
			t.Fatalf("%s: no gain %v", name, ll)
		}
		t.Logf("%s: %.5f → %.5f per row, variances %.4f (true 1)", name, ll[0], ll[len(ll)-1], r.Var)
	}
}

// The moment start refined by Gaussian Baum–Welch recovers the generated
// means and transitions at least as well as the moment fit alone, and
// scores held-out sequences of the same chain higher (hmm.LogLikelihood:
// the moment fit with one variance for all states estimated from the
// held-out rows themselves, the refined model with its own).
func TestGaussianBaumWelchRecovers(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{5, 6} {
		cfg := synth.HMMSeqConfig{Seqs: 1200, Len: 12, K: 3, D: 8, Sigma2: 1.5, Seed: seed}
		all, truth := generated(t, cfg, 500)
		// The first 600 sequences fit, the other 600 of the same chain
		// are held out.
		src, held := rowsOf(all, 0, 600*12), rowsOf(all, 600*12, 1200*12)
		mom, bw := gaussianFit(t, src, 3, hmm.DefaultEMPasses, hmm.DefaultEMTol, 1)
		before, err := hmm.Eval(mom, truth)
		if err != nil {
			t.Fatal(err)
		}
		after, err := hmm.Eval(bw, truth)
		if err != nil {
			t.Fatal(err)
		}
		lm, err := hmm.LogLikelihood(ctx, mom, held, 1)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := hmm.LogLikelihood(ctx, bw, held, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		t.Logf("seed %d, %d passes (loglik per row %.4f → %.4f), variances %.4f (true %g)\nmoments %s, held-out %.4f\nBaum–Welch %s, held-out %.4f",
			seed, bw.Fit.EM.Passes, bw.Fit.EM.LogLik[0], bw.Fit.EM.LogLik[len(bw.Fit.EM.LogLik)-1], bw.Var, cfg.Sigma2, b, lm.LogLik, a, lb.LogLik)
		if after.O > before.O+1e-9 || after.T > before.T+1e-9 {
			t.Errorf("seed %d: errors O %.4f, T %.4f after Baum–Welch; %.4f, %.4f from the moments", seed, after.O, after.T, before.O, before.T)
		}
		if !(lb.LogLik > lm.LogLik) {
			t.Errorf("seed %d: held-out log-likelihood per row %.4f after Baum–Welch, %.4f of the moment fit", seed, lb.LogLik, lm.LogLik)
		}
	}
}

// rowsOf is the rows lo to hi of src, in batches of 33.
func rowsOf(src *stream.MemoryDense, lo, hi int) *stream.MemoryDense {
	all := src.All
	return &stream.MemoryDense{BatchRows: 33, All: &stream.Dense{Start: int64(lo), Rows: hi - lo, Cols: all.Cols,
		Data: all.Data[lo*all.Cols : hi*all.Cols], Group: all.Group[lo:hi]}}
}

// The Gaussian fit is the same bytes whatever the workers, its passes the
// same whatever the batches, and the statistics of a pass over two shards
// cut at a sequence boundary merge into those of the whole, bit for bit.
// (The moment fit's last digits move with the batches, so the batches are
// varied from one start.)
func TestGaussianBaumWelchDeterministicAndMerges(t *testing.T) {
	ctx := context.Background()
	src, truth := generated(t, synth.HMMSeqConfig{Seqs: 80, Len: 10, K: 2, D: 4, Seed: 9}, 64)
	var first []byte
	for _, w := range []int{1, 2, 4} {
		_, bw := gaussianFit(t, src, 2, 8, -1, w)
		bw.ClearTiming()
		got, _ := json.Marshal(bw)
		if first == nil {
			first = got
			if !bytes.Contains(got, []byte(`"var":[`)) {
				t.Fatalf("no variances: %s", got)
			}
		} else if !bytes.Equal(got, first) {
			t.Fatalf("%d workers: another model", w)
		}
	}
	first = nil
	for _, batch := range []int{7, 64, 1000} {
		src.BatchRows = batch
		cfg := hmm.BWConfig{Passes: 5, Tol: -1, Gaussian: true}
		r, err := hmm.Refine(ctx, src, hmm.Start(truth, cfg), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(r)
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Fatalf("batches of %d: another model", batch)
		}
	}
	start := &hmm.Model{Model: "hmm", K: 2, D: 4, O: truth.O, T: truth.T, Pi: truth.Pi, Var: []float64{0.4, 0.7}}
	cut := 200 // sequence 20 starts at row 200
	checkMergedPass(t, src, cut, "baum-welch", []string{"pi", "trans", "emit", "ll", "seqs", "occ", "sq"}, hmm.BWPass(start, 1, ""))
	checkMergedPass(t, src, cut, "start", []string{"resid", "x", "sq", "seqs"}, hmm.GaussianStartPass(start, 1, ""))
}

// checkMergedPass runs pass p over the rows of src, and over them cut at
// row cut (a sequence's first row) in two shards merged: the rows and the
// sums named are the same bit for bit.
func checkMergedPass(t *testing.T, src *stream.MemoryDense, cut int, name string, sums []string, p *implicit.Pass) {
	t.Helper()
	ctx := context.Background()
	whole, err := p.Run(ctx, src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Run(ctx, rowsOf(src, 0, cut).Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Run(ctx, rowsOf(src, cut, src.All.Rows).Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Rows != whole.Rows {
		t.Fatalf("%s: %d rows merged, %d whole", name, a.Rows, whole.Rows)
	}
	for _, s := range sums {
		x, y := a.Sum(s), whole.Sum(s)
		if len(y) == 0 {
			t.Fatalf("%s: no sums %q", name, s)
		}
		for i := range y {
			if x[i] != y[i] {
				t.Fatalf("%s: %s[%d]: merged %v, whole %v", name, s, i, x[i], y[i])
			}
		}
	}
}

// The Gaussian Baum–Welch passes a pipeline runs a stage per pass of
// (models.Refinement: the moment passes, Start, the variances' start
// pass, then Baum–Welch's) give Fit's model bit for bit, at k within the
// dimension and above it, where the start adds copies of the states the
// moments give.
func TestGaussianRefinementIsFit(t *testing.T) {
	ctx := context.Background()
	src, _ := generated(t, synth.HMMSeqConfig{Seqs: 300, Len: 20, K: 3, D: 6, Seed: 3}, 97)
	for _, k := range []int{3, 7} {
		ds := hmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
		fs := flag.NewFlagSet("hmm", flag.ContinueOnError)
		ds.Flags(fs)
		if err := fs.Parse([]string{"--windows", "--em-passes", "30"}); err != nil {
			t.Fatal(err)
		}
		if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
			t.Fatal(err)
		}
		c := models.Common{K: k, Seed: 1}
		r := models.RefinementOf(ds, c)
		if r == nil {
			t.Fatal("Gaussian rows: no refinement")
		}
		m, passes := refineAsPipeline(t, r, src)
		f, err := ds.Fit(ctx, src, c)
		if err != nil {
			t.Fatal(err)
		}
		m.ClearTiming()
		f.ClearTiming()
		got, _ := json.Marshal(m)
		want, _ := json.Marshal(f)
		if !bytes.Equal(got, want) {
			t.Errorf("k=%d: the refinement's model differs from Fit's:\n%s\n%s", k, got, want)
		}
		var fm struct {
			Var   []float64 `json:"var"`
			Stats struct {
				EM       struct{ Passes int } `json:"em"`
				Warnings []string             `json:"warnings"`
			} `json:"stats"`
		}
		if err := json.Unmarshal(got, &fm); err != nil {
			t.Fatal(err)
		}
		// Above the dimension one warning says how many states the moments
		// gave, of rows (not symbols), and how the passes started the rest.
		if k > 6 {
			w := strings.Join(fm.Stats.Warnings, " | ")
			if n := strings.Count(w, "the moments give"); n != 1 || !strings.Contains(w, "the dimension d=6") ||
				strings.Contains(w, "symbols") || strings.Contains(w, "the model has") || !strings.Contains(w, "Baum–Welch starts the other") {
				t.Errorf("k=%d: warnings %q", k, fm.Stats.Warnings)
			}
		}
		// The variances' start, then the Baum–Welch passes, within the cap.
		if len(fm.Var) != k || passes != fm.Stats.EM.Passes+1 || passes > r.Cap() || fm.Stats.EM.Passes < 2 {
			t.Errorf("k=%d: %d passes, %d of Baum–Welch recorded, cap %d, variances %v", k, passes, fm.Stats.EM.Passes, r.Cap(), fm.Var)
		}
	}
}

// The Gaussian passes after the first read the sequences from memory (8·d
// bytes a row) when they fit the budget, and give the model of passes
// that all read the source, bit for bit, whatever the workers; above the
// budget every pass reads the source. The first read is the variances'
// start pass.
func TestGaussianBaumWelchInMemory(t *testing.T) {
	ctx := context.Background()
	const passes = 6
	mem, truth := generated(t, synth.HMMSeqConfig{Seqs: 120, Len: 15, K: 3, D: 5, Seed: 4}, 77)
	for _, name := range []string{"moment start", "with variances"} {
		start := hmm.Start(truth, hmm.BWConfig{Gaussian: true})
		reads := passes + 1 // the variances' start, then the passes
		if name == "with variances" {
			start.Var, reads = []float64{0.3, 0.5, 0.8}, passes
		}
		fit := func(cfg hmm.BWConfig) ([]byte, int) {
			t.Helper()
			c := &counted{MemoryDense: mem}
			cfg.Passes, cfg.Tol, cfg.Gaussian = passes, -1, true
			r, err := hmm.Refine(ctx, c, start, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.BW.Passes != passes {
				t.Fatalf("%s: %d passes", name, r.BW.Passes)
			}
			b, _ := json.Marshal(r)
			return b, c.reads
		}
		streamed, n := fit(hmm.BWConfig{Memory: -1})
		if n != reads {
			t.Fatalf("%s, no memory: %d reads of the source, want %d", name, n, reads)
		}
		for _, w := range []int{1, 3} {
			got, n := fit(hmm.BWConfig{Workers: w})
			if n != 1 {
				t.Fatalf("%s, %d workers: %d reads of the source, want 1", name, w, n)
			}
			if !bytes.Equal(got, streamed) {
				t.Fatalf("%s, %d workers: the passes from memory give another model", name, w)
			}
		}
		// 1800 rows of 40 bytes: not within 50000 bytes.
		got, n := fit(hmm.BWConfig{Memory: 50000})
		if n != reads || !bytes.Equal(got, streamed) {
			t.Fatalf("%s, above the budget: %d reads (want %d), same model %v", name, n, reads, bytes.Equal(got, streamed))
		}
	}
}
