package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
)

// gmmLogLik is the average log-likelihood per row of the rows of path under
// the model file model (one E step of the library's EM pass).
func gmmLogLik(t *testing.T, model, path string) float64 {
	t.Helper()
	m, err := gmm.Read(model)
	if err != nil {
		t.Fatal(err)
	}
	mix := &gmm.Mixture{Model: "gmm", K: m.K, D: m.D, Weights: m.Weights, Means: m.Means, Variances: make([][]float64, m.K)}
	for i, v := range m.Variances {
		mix.Variances[i] = []float64{v}
	}
	src, err := stream.OpenDense(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	st, err := gmm.EMPass(mix, 1e-6, 1, path).Run(context.Background(), src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, ll, err := gmm.MStep(mix, st, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	return ll
}

// fit gmm refines the moment fit by EM passes by default: a higher
// log-likelihood than --em-passes 0, one pass line each on
// stderr, the passes in the model file, the same bytes whatever
// --workers; --em-passes 0 is the library's moment fit, byte for byte;
// and k above d gets a warning and a model, not a refusal.
func TestFitGMMEM(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	gen := []string{"gen", "gmm", "--rows", "4000", "--d", "5", "--k", "4", "--differing", "--sigma2", "2", "--progress", "off"}
	mustRun(t, append(gen, "--seed", "3", "--out", p("train.parquet"), "--truth", p("truth.json"))...)
	fit := []string{"fit", "gmm", "--input", p("train.parquet"), "--k", "4", "--no-timing", "--progress", "off"}
	code, _, msg := streamfit(t, append(fit, "--out", p("em1.json"), "--workers", "1")...)
	if code != 0 {
		t.Fatal(msg)
	}
	mustRun(t, append(fit, "--out", p("em4.json"), "--workers", "4")...)
	mustRun(t, append(fit, "--out", p("mom.json"), "--em-passes", "0")...)
	m, err := gmm.Read(p("em1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Fit.EM == nil || m.Fit.EM.Passes < 1 || len(m.Fit.EM.LogLik) != m.Fit.EM.Passes {
		t.Fatalf("no EM record in the model: %+v", m.Fit)
	}
	for i := 1; i < len(m.Fit.EM.LogLik); i++ {
		if m.Fit.EM.LogLik[i] < m.Fit.EM.LogLik[i-1]-1e-9 {
			t.Errorf("the log-likelihood fell at pass %d: %v", i+1, m.Fit.EM.LogLik)
		}
	}
	if n := strings.Count(msg, " (em) done in "); n != m.Fit.EM.Passes {
		t.Errorf("%d pass lines for %d EM passes:\n%s", n, m.Fit.EM.Passes, msg)
	}
	a, b := readBytes(t, p("em1.json")), readBytes(t, p("em4.json"))
	if a != b {
		t.Error("--workers 1 and 4 wrote different models")
	}
	emLL, momLL := gmmLogLik(t, p("em1.json"), p("train.parquet")), gmmLogLik(t, p("mom.json"), p("train.parquet"))
	if !(emLL > momLL) {
		t.Errorf("log-likelihood %.4f with EM passes, %.4f without", emLL, momLL)
	}
	t.Logf("log-likelihood per row: %.4f with EM passes, %.4f by the moments", emLL, momLL)

	// --em-passes 0: the moment fit of the library, as before the passes.
	src, err := stream.OpenDense(p("train.parquet"), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	lib, err := gmm.Fit(context.Background(), src, gmm.Config{K: 4, Seed: 1, Solver: "rtpm", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	lib.ClearTiming()
	if err := lib.Write(p("lib.json")); err != nil {
		t.Fatal(err)
	}
	if readBytes(t, p("lib.json")) != readBytes(t, p("mom.json")) {
		t.Error("--em-passes 0 is not the moment fit")
	}

	// k > d: the moments give d components, EM starts the others.
	code, _, msg = streamfit(t, "fit", "gmm", "--input", p("train.parquet"), "--k", "7", "--progress", "off", "--out", p("k7.json"))
	if code != 0 || !strings.Contains(msg, "warning: the moments give") {
		t.Errorf("fit gmm --k 7 on d=5: exit %d, %s", code, msg)
	}
	if m, err := gmm.Read(p("k7.json")); err != nil || m.K != 7 {
		t.Errorf("fit gmm --k 7: %v", err)
	}
	for _, c := range [][]string{{"--em-passes", "-1"}, {"--em-tol", "0"}} {
		if code, _, msg := streamfit(t, append(fit, append(c, "--out", p("bad.json"))...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", c, code, msg)
		}
	}
}

// readBytes returns the contents of path.
func readBytes(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fit hmm --discrete refines the moment fit by Baum–Welch passes by
// default: a higher log-likelihood than the moment fit's (floored, as the
// passes start from it), one pass line each; --em-passes 0 is the moment
// fit alone.
func TestFitHMMBaumWelch(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "hmm", "--seqs", "800", "--len", "20", "--k", "3", "--d", "8", "--discrete", "--seed", "5", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	fit := []string{"fit", "hmm", "--input", p("s.parquet"), "--group-column", "group", "--k", "3", "--discrete", "--no-timing", "--progress", "off"}
	code, _, msg := streamfit(t, append(fit, "--out", p("bw.json"))...)
	if code != 0 {
		t.Fatal(msg)
	}
	mustRun(t, append(fit, "--out", p("mom.json"), "--em-passes", "0")...)
	bw, err := hmm.Read(p("bw.json"))
	if err != nil {
		t.Fatal(err)
	}
	mom, err := hmm.Read(p("mom.json"))
	if err != nil {
		t.Fatal(err)
	}
	if mom.Fit.EM != nil || bw.Fit.EM == nil || bw.Fit.EM.Passes < 2 {
		t.Fatalf("EM records: %+v with the passes, %+v without", bw.Fit.EM, mom.Fit.EM)
	}
	if n := strings.Count(msg, " (baum-welch) done in "); n != bw.Fit.EM.Passes {
		t.Errorf("%d pass lines for %d passes:\n%s", n, bw.Fit.EM.Passes, msg)
	}
	src, err := stream.OpenDense(p("s.parquet"), stream.Options{GroupColumn: "group"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	ll := func(m *hmm.Model) float64 {
		r, err := hmm.Refine(context.Background(), src, hmm.Start(m, hmm.BWConfig{}), hmm.BWConfig{Passes: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.BW.LogLik[0]
	}
	if a, b := ll(bw), ll(mom); !(a > b) {
		t.Errorf("log-likelihood per row %.4f after Baum–Welch, %.4f of the moment fit", a, b)
	}
}

// fit hmm of Gaussian rows refines the moment fit by Baum–Welch passes of
// a Gaussian per state, by default and with --em-passes N: after a pass
// that starts the variances, at most N passes, one pass line each, the
// variances in the model file; eval runs on it against the truth (errors
// no larger than the moment fit's) and on the sequences (--heldout:
// a higher log-likelihood per row than the moment fit's); the model is
// the same bytes whatever --workers; --em-passes 0 is the moment fit,
// without variances.
func TestFitHMMGaussianBaumWelch(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "hmm", "--seqs", "600", "--len", "12", "--k", "3", "--d", "6", "--sigma2", "1.5", "--seed", "5", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	fit := []string{"fit", "hmm", "--input", p("s.parquet"), "--group-column", "group", "--k", "3", "--windows", "--no-timing", "--progress", "off"}
	code, _, msg := streamfit(t, append(fit, "--out", p("bw.json"), "--em-passes", "20")...)
	if code != 0 {
		t.Fatal(msg)
	}
	mustRun(t, append(fit, "--out", p("bw4.json"), "--em-passes", "20", "--workers", "4")...)
	mustRun(t, append(fit, "--out", p("default.json"))...)
	mustRun(t, append(fit, "--out", p("mom.json"), "--em-passes", "0")...)
	bw, err := hmm.Read(p("bw.json"))
	if err != nil {
		t.Fatal(err)
	}
	mom, err := hmm.Read(p("mom.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := hmm.Read(p("default.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(bw.Var) != 3 || bw.Fit.EM == nil || bw.Fit.EM.Passes < 2 || bw.Fit.EM.Passes > 20 {
		t.Fatalf("variances %v, passes %+v", bw.Var, bw.Fit.EM)
	}
	if mom.Var != nil || mom.Fit.EM != nil || len(def.Var) != 3 || def.Fit.EM == nil {
		t.Fatalf("--em-passes 0: variances %v, passes %+v; by default: %v, %+v", mom.Var, mom.Fit.EM, def.Var, def.Fit.EM)
	}
	if n := strings.Count(msg, " (baum-welch) done in "); n != bw.Fit.EM.Passes || !strings.Contains(msg, " (baum-welch start) done in ") {
		t.Errorf("%d pass lines for %d passes, and the start's:\n%s", n, bw.Fit.EM.Passes, msg)
	}
	if a, b := readBytes(t, p("bw.json")), readBytes(t, p("bw4.json")); a != b {
		t.Errorf("--workers 4 gives another model")
	}
	metrics := func(model string) map[string]any {
		var ev map[string]any
		out := mustRun(t, "eval", "--model", p(model), "--truth", p("truth.json"), "--json")
		if err := json.Unmarshal([]byte(out), &ev); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return ev
	}
	ea, eb := metrics("bw.json"), metrics("mom.json")
	if ea["O_rel_err"].(float64) > eb["O_rel_err"].(float64) || ea["T_rel_err"].(float64) > eb["T_rel_err"].(float64) {
		t.Errorf("errors after Baum–Welch %v, of the moment fit %v", ea, eb)
	}
	heldout := func(model string) float64 {
		var sc struct {
			Rows   int64   `json:"rows"`
			LogLik float64 `json:"loglik_per_row"`
		}
		out := mustRun(t, "eval", "--model", p(model), "--heldout", p("s.parquet"), "--group-column", "group", "--json")
		if err := json.Unmarshal([]byte(out), &sc); err != nil || sc.Rows != 7200 {
			t.Fatalf("%s: %v", out, err)
		}
		return sc.LogLik
	}
	a, b := heldout("bw.json"), heldout("mom.json")
	if !(a > b) {
		t.Errorf("log-likelihood per row %.4f after Baum–Welch, %.4f of the moment fit", a, b)
	}
	t.Logf("%d passes; errors %v after Baum–Welch, %v of the moment fit; log-likelihood per row %.4f, %.4f", bw.Fit.EM.Passes, ea, eb, a, b)
}
