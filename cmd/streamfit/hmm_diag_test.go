package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
)

// fit hmm --covariance diag fits a variance per state and coordinate by
// the Baum–Welch passes: the model file has var_diag (and no var), the
// same bytes whatever --workers; eval scores it against the truth and on
// held-out sequences, and report charts its variances. --covariance diag
// is refused with --em-passes 0 (the moment fit gives no variances) and
// with --discrete.
func TestFitHMMDiagonal(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "hmm", "--seqs", "300", "--len", "12", "--k", "3", "--d", "5", "--sigma2", "1.5", "--seed", "5", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	fit := []string{"fit", "hmm", "--input", p("s.parquet"), "--group-column", "group", "--k", "3", "--windows", "--no-timing", "--progress", "off", "--em-passes", "20"}
	mustRun(t, append(fit, "--out", p("diag.json"), "--covariance", "diag")...)
	mustRun(t, append(fit, "--out", p("diag4.json"), "--covariance", "diag", "--workers", "4")...)
	m, err := hmm.Read(p("diag.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Var != nil || len(m.VarDiag) != 3 || len(m.VarDiag[0]) != 5 || m.Fit.EM == nil || m.Fit.EM.Passes < 2 {
		t.Fatalf("var %v, var_diag %v, passes %+v", m.Var, m.VarDiag, m.Fit.EM)
	}
	if a, b := readBytes(t, p("diag.json")), readBytes(t, p("diag4.json")); a != b {
		t.Errorf("--workers 4 gives another model")
	}
	var ev map[string]any
	out := mustRun(t, "eval", "--model", p("diag.json"), "--truth", p("truth.json"), "--json")
	if err := json.Unmarshal([]byte(out), &ev); err != nil || !(ev["O_rel_err"].(float64) < 0.2) {
		t.Fatalf("eval --truth: %s %v", out, err)
	}
	var sc struct {
		Rows   int64   `json:"rows"`
		LogLik float64 `json:"loglik_per_row"`
	}
	out = mustRun(t, "eval", "--model", p("diag.json"), "--heldout", p("s.parquet"), "--group-column", "group", "--json")
	if err := json.Unmarshal([]byte(out), &sc); err != nil || sc.Rows != 3600 || !(sc.LogLik < 0) {
		t.Fatalf("eval --heldout: %s %v", out, err)
	}
	mustRun(t, "report", "--model", p("diag.json"), "--out", p("r.html"))
	if html := readBytes(t, p("r.html")); !strings.Contains(html, "Variances σ²") {
		t.Errorf("the report has no variances")
	}
	t.Logf("%d passes, O error %.4f, held-out log-likelihood per row %.4f", m.Fit.EM.Passes, ev["O_rel_err"], sc.LogLik)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--covariance", "diag", "--em-passes", "0"}, "--em-passes 0"},
		{[]string{"--covariance", "diag", "--discrete"}, "--discrete"},
	} {
		args := append([]string{"fit", "hmm", "--input", p("s.parquet"), "--group-column", "group", "--k", "3", "--progress", "off", "--out", p("no.json")}, tc.args...)
		code, _, msg := streamfit(t, args...)
		if code != 2 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "--covariance diag") {
			t.Errorf("%v: exit %d, %s", tc.args, code, msg)
		}
	}
}
