package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
)

// writeDiagCSV writes n rows drawn from a mixture of three components in
// d=3 whose features' variances differ by component and feature (0.2 to
// 4), as CSV with a header, and returns the rows.
func writeDiagCSV(t *testing.T, path string, n int, seed uint64) [][]float64 {
	t.Helper()
	w := []float64{0.5, 0.3, 0.2}
	mu := [][]float64{{0, 0, 0}, {8, -6, 4}, {-8, 7, -9}}
	v := [][]float64{{4, 0.2, 1}, {0.3, 3, 0.5}, {1.5, 0.25, 4}}
	r := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	b.WriteString("a,b,c\n")
	rows := make([][]float64, n)
	for k := range rows {
		u, i := r.Float64(), 0
		for ; i < 2 && u >= w[i]; i++ {
			u -= w[i]
		}
		x := make([]float64, 3)
		for j := range x {
			x[j] = mu[i][j] + math.Sqrt(v[i][j])*r.NormFloat64()
		}
		rows[k] = x
		fmt.Fprintf(&b, "%v,%v,%v\n", x[0], x[1], x[2])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows
}

// fit gmm --covariance diag writes a diagonal mixture, the same bytes
// whatever --workers; eval --heldout scores it (higher than the spherical
// fit on rows whose features' variances differ), infer gives its rows
// Bayes' rule's responsibilities, report draws it; --covariance diag with
// --em-passes 0 is refused with what would work.
func TestFitGMMDiag(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	writeDiagCSV(t, p("train.csv"), 5000, 1)
	test := writeDiagCSV(t, p("test.csv"), 400, 2)
	fit := []string{"fit", "gmm", "--input", p("train.csv"), "--k", "3", "--no-timing", "--progress", "off"}
	mustRun(t, append(fit, "--covariance", "diag", "--workers", "1", "--out", p("diag1.json"))...)
	mustRun(t, append(fit, "--covariance", "diag", "--workers", "3", "--out", p("diag3.json"))...)
	mustRun(t, append(fit, "--out", p("sph.json"))...)
	if readBytes(t, p("diag1.json")) != readBytes(t, p("diag3.json")) {
		t.Error("--workers 1 and 3 wrote different diagonal models")
	}
	m, err := gmm.Read(p("diag1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !m.IsDiag() || len(m.Diag) != 3 || len(m.Diag[0]) != 3 || m.Fit == nil || m.Fit.EM == nil {
		t.Fatalf("not a fitted diagonal mixture: %+v", m)
	}

	score := func(model string) float64 {
		t.Helper()
		var res struct {
			Rows   int64   `json:"rows"`
			LogLik float64 `json:"loglik_per_row"`
		}
		out := mustRun(t, "eval", "--model", model, "--heldout", p("test.csv"), "--json")
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Rows != 400 {
			t.Fatalf("eval --heldout --json: %v, %d rows:\n%s", err, res.Rows, out)
		}
		return res.LogLik
	}
	ld, ls := score(p("diag1.json")), score(p("sph.json"))
	t.Logf("held-out log-likelihood per row: diag %.4f, spherical %.4f", ld, ls)
	if !(ld > ls+0.1) {
		t.Errorf("held out: diag %.4f, spherical %.4f", ld, ls)
	}
	if out := mustRun(t, "eval", "--model", p("diag1.json"), "--heldout", p("test.csv")); !strings.Contains(out, "held-out log-likelihood: ") || !strings.Contains(out, "per row (400 rows") {
		t.Errorf("eval --heldout: %q", out)
	}

	// infer: Bayes' rule with diag(σᵢⱼ²), without logarithms (no
	// density underflows at this scale); the command works in logarithms,
	// so both agree to a few ulps of 1.
	got := parseShareRows(t, []byte(mustRun(t, "infer", "--model", p("diag1.json"), "--input", p("test.csv"), "--out", "-", "--progress", "off")))
	if len(got) != len(test) {
		t.Fatalf("%d rows of shares for %d rows", len(got), len(test))
	}
	var ll float64
	for r, x := range test {
		dens := make([]float64, m.K)
		sum := 0.0
		for i := range m.K {
			dens[i] = m.Weights[i]
			for j, v := range x {
				s2 := m.Diag[i][j]
				dens[i] *= math.Exp(-(v-m.Means[i][j])*(v-m.Means[i][j])/(2*s2)) / math.Sqrt(2*math.Pi*s2)
			}
			sum += dens[i]
		}
		ll += math.Log(sum)
		for i := range m.K {
			if math.Abs(got[r][i]-dens[i]/sum) > 1e-12 {
				t.Fatalf("row %d component %d: %g, Bayes' rule gives %g", r, i, got[r][i], dens[i]/sum)
			}
		}
	}
	if ll /= float64(len(test)); math.Abs(ll-ld) > 1e-9 {
		t.Errorf("eval --heldout %.10f, brute force %.10f", ld, ll)
	}

	mustRun(t, "report", "--model", p("diag1.json"), "--out", p("r.html"))
	if !strings.Contains(readBytes(t, p("r.html")), "Diagonal: one row per component") {
		t.Error("the report does not draw the diagonal variances")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--covariance", "diag", "--em-passes", "0"}, "give --em-passes N > 0"},
		{[]string{"--covariance", "full"}, "want spherical or diag"},
	} {
		code, _, msg := streamfit(t, append(fit, append(c.args, "--out", p("bad.json"))...)...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q: %s", c.args, code, c.want, msg)
		}
		if _, err := os.Stat(p("bad.json")); err == nil {
			t.Errorf("%v left a model", c.args)
		}
	}
}
