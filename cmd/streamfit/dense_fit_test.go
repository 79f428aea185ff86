package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// denseCase is one dense model's gen → fit → eval round trip: the metrics
// named in limits must come out at most the given value. The limits are a few
// standard errors of the moment estimates at these sizes (see each model
// package's recovery test for the reasoning).
type denseCase struct {
	name   string
	gen    []string
	fit    []string
	limits map[string]float64
}

var denseCases = []denseCase{
	{"gmm", []string{"gmm", "--rows", "20000", "--d", "10", "--k", "3", "--seed", "1"},
		[]string{"gmm", "--k", "3", "--seed", "2"},
		map[string]float64{"means_rel_err": 0.05, "weights_l1": 0.05, "variances_max_rel_err": 0.05}},
	{"ica", []string{"ica", "--rows", "30000", "--d", "6", "--k", "3", "--seed", "1"},
		[]string{"ica", "--k", "3", "--seed", "2"},
		map[string]float64{"mixing_rel_err": 0.06}},
	{"multiview", []string{"multiview", "--rows", "30000", "--dims", "4,5,6", "--k", "3", "--seed", "1"},
		[]string{"multiview", "--k", "3", "--seed", "2", "--views", "0,1,2,3;4,5,6,7,8;9,10,11,12,13,14"},
		map[string]float64{"means_rel_err": 0.06, "weights_l1": 0.06}},
	{"hmm", []string{"hmm", "--seqs", "60000", "--len", "3", "--k", "3", "--d", "6", "--seed", "1"},
		[]string{"hmm", "--k", "3", "--seed", "2", "--group-column", "group"},
		map[string]float64{"O_rel_err": 0.05, "T_rel_err": 0.1, "pi_l1": 0.1}},
	{"markov", []string{"snapshots", "--sets", "20000", "--per-set", "10", "--k", "4", "--seed", "1"},
		[]string{"markov", "--r", "0.3", "--seed", "3", "--group-column", "group"},
		map[string]float64{"P_rel_err": 0.1, "T_rel_err": 0.1, "pi_l1": 0.05}},
	// The issue-5 regression: close state weights used to mis-pair U and UT.
	{"hmm-snapshot", []string{"snapshots", "--sets", "2000", "--per-set", "100", "--k", "3", "--m", "10", "--sigma2", "0.5", "--seed", "2"},
		[]string{"hmm-snapshot", "--k", "3", "--r", "0.3", "--seed", "3", "--group-column", "group"},
		map[string]float64{"U_rel_err": 0.05, "UT_rel_err": 0.1, "P_rel_err": 0.15}},
}

// Every dense model: gen writes a table and its truth, fit recovers the
// model within the limits, and a second fit with the same seed writes the
// same model (up to the recorded run time).
func TestDenseFitEval(t *testing.T) {
	dir := t.TempDir()
	for _, c := range denseCases {
		t.Run(c.name, func(t *testing.T) {
			p := func(n string) string { return filepath.Join(dir, c.name+"."+n) }
			mustRun(t, append([]string{"gen"}, append(c.gen, "--out", p("parquet"), "--truth", p("truth.json"), "--progress", "off")...)...)
			fit := append([]string{"fit"}, append(c.fit, "--input", p("parquet"), "--progress", "off")...)
			mustRun(t, append(fit, "--out", p("a.json"))...)
			mustRun(t, append(fit, "--out", p("b.json"))...)
			a, b := withoutSeconds(t, p("a.json")), withoutSeconds(t, p("b.json"))
			if a != b {
				t.Errorf("two fits with the same input and seed differ")
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(mustRun(t, "eval", "--model", p("a.json"), "--truth", p("truth.json"), "--json")), &ev); err != nil {
				t.Fatal(err)
			}
			for name, limit := range c.limits {
				for _, v := range numbers(ev[name]) {
					if !(v <= limit) {
						t.Errorf("%s = %v, want ≤ %g (eval: %v)", name, ev[name], limit, ev)
					}
				}
				if len(numbers(ev[name])) == 0 {
					t.Errorf("eval has no %s: %v", name, ev)
				}
			}
			t.Logf("eval: %v", ev)
		})
	}
}

// numbers returns a JSON number, or the numbers of a JSON array, as floats.
func numbers(v any) []float64 {
	switch x := v.(type) {
	case float64:
		return []float64{x}
	case []any:
		var out []float64
		for _, e := range x {
			out = append(out, numbers(e)...)
		}
		return out
	}
	return nil
}

// withoutSeconds reads a model file and drops every "seconds" field (the
// only part of a model that depends on the run).
func withoutSeconds(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "seconds")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(m)
	out, _ := json.Marshal(m)
	return string(out)
}

// The r scan from the command line: a chain whose P has a negative
// eigenvalue (--p flip) has a pole near r = 0.11; fit markov without --r
// must mark it, step over it and find r ≈ 0.3.
func TestDenseScanAroundPole(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "snapshots", "--sets", "50000", "--per-set", "10", "--k", "3", "--p", "flip", "--seed", "1", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "fit", "markov", "--input", p("s.parquet"), "--group-column", "group", "--seed", "3", "--out", p("m.json"), "--progress", "off")
	var m struct {
		R    float64 `json:"r"`
		Scan []struct {
			R    float64 `json:"r"`
			Pole bool    `json:"pole"`
		} `json:"r_scan"`
	}
	b, _ := os.ReadFile(p("m.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	poles := 0
	for _, s := range m.Scan {
		if s.Pole {
			poles++
		}
	}
	if poles == 0 || m.R < 0.25 || m.R > 0.35 {
		t.Errorf("scanned r=%.2f with %d grid points in a pole window; want r ≈ 0.3 and a pole", m.R, poles)
	}
	out := mustRun(t, "eval", "--model", p("m.json"), "--truth", p("truth.json"))
	if !strings.Contains(out, "P_rel_err") {
		t.Errorf("eval printed %q", out)
	}
}

// gen --row-group sets the rows per Parquet row group.
func TestDenseGenRowGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.parquet")
	mustRun(t, "gen", "gmm", "--rows", "1000", "--d", "3", "--k", "2", "--row-group", "100", "--out", path, "--progress", "off")
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := r.NumRowGroups(); n != 10 {
		t.Errorf("%d row groups, want 10", n)
	}
}

// A dense fit whose solver stops at its iteration cap still writes the model,
// records converged: false with the reason in its stats, and prints the
// warning on stderr; the same fit with the default iterations converges.
func TestDenseSolverWarning(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "gmm", "--rows", "5000", "--d", "6", "--k", "3", "--seed", "1", "--out", p("g.parquet"), "--truth", p("truth.json"), "--progress", "off")
	type stats struct {
		Stats struct {
			Converged bool     `json:"converged"`
			Warnings  []string `json:"warnings"`
		} `json:"stats"`
	}
	read := func(name string) stats {
		var s stats
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	fit := []string{"fit", "gmm", "--input", p("g.parquet"), "--k", "3", "--progress", "off"}
	code, _, errs := streamfit(t, append(fit, "--iters", "1", "--out", p("capped.json"))...)
	capped := read("capped.json")
	if code != 0 || capped.Stats.Converged || len(capped.Stats.Warnings) == 0 {
		t.Fatalf("--iters 1: exit %d, stats %+v; want success, converged false and a warning", code, capped.Stats)
	}
	if !strings.Contains(errs, "warning: "+capped.Stats.Warnings[0]) || !strings.Contains(errs, "did not settle within 1 iterations") {
		t.Errorf("stderr %q does not carry the warning %q", errs, capped.Stats.Warnings[0])
	}
	mustRun(t, append(fit, "--out", p("full.json"))...)
	if full := read("full.json"); !full.Stats.Converged || len(full.Stats.Warnings) != 0 {
		t.Errorf("default iterations: stats %+v; want converged without warnings", full.Stats)
	}
}

// `fit hmm-snapshot` with k above what the moments give (here above the
// d=3 symbols) fits those states, copies them up to k and warns, exit 0;
// with --discrete every symbol has a positive probability in every state,
// and without it the fit says the rows are one-hot.
func TestSnapshotHMMFewerStates(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "snapshots", "--sets", "2000", "--per-set", "20", "--k", "3", "--seed", "1", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	fit := []string{"fit", "hmm-snapshot", "--input", p("s.parquet"), "--group-column", "group", "--k", "5", "--progress", "off"}
	code, _, errs := streamfit(t, append(fit, "--discrete", "--out", p("d.json"))...)
	if code != 0 || !strings.Contains(errs, "warning: the moments give") || !strings.Contains(errs, "k=5 exceeds the dimension d=3") {
		t.Fatalf("--discrete --k 5: exit %d, stderr %q; want success and a warning about the states", code, errs)
	}
	var m struct {
		K     int         `json:"k"`
		U     [][]float64 `json:"U"`
		P     [][]float64 `json:"P"`
		Stats struct {
			States int `json:"states_fitted"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(readFile(t, p("d.json")), &m); err != nil {
		t.Fatal(err)
	}
	if m.K != 5 || len(m.U) != 5 || len(m.P) != 5 || m.Stats.States < 1 || m.Stats.States > 3 {
		t.Fatalf("k %d, %d U rows, %d P rows, %d states fitted; want 5, 5, 5 and 1–3", m.K, len(m.U), len(m.P), m.Stats.States)
	}
	for i, row := range m.U {
		for s, v := range row {
			if !(v > 0) {
				t.Errorf("state %d, symbol %d: probability %g", i, s, v)
			}
		}
	}
	code, _, errs = streamfit(t, append(fit, "--out", p("g.json"))...)
	if code != 0 || !strings.Contains(errs, "the rows are one-hot") || !strings.Contains(errs, "--discrete") {
		t.Errorf("--k 5 without --discrete: exit %d, stderr %q; want success and a warning naming --discrete", code, errs)
	}
}

// `fit ica` with k above the dimension fits the d sources d mixtures can
// separate and warns, exit 0 (a refusal before: real data asked for more
// sources than it holds gets the best answer, as gmm's and hmm's fits do).
func TestICAFewerSources(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "ica", "--rows", "20000", "--d", "4", "--k", "4", "--seed", "1", "--out", p("x.parquet"), "--truth", p("truth.json"), "--progress", "off")
	code, _, errs := streamfit(t, "fit", "ica", "--input", p("x.parquet"), "--k", "9", "--out", p("m.json"), "--progress", "off")
	if code != 0 || !strings.Contains(errs, "warning: k=9 exceeds the dimension d=4") {
		t.Fatalf("--k 9 on d=4: exit %d, stderr %q; want success and a warning", code, errs)
	}
	var m struct {
		K      int         `json:"k"`
		Mixing [][]float64 `json:"mixing"`
	}
	if err := json.Unmarshal(readFile(t, p("m.json")), &m); err != nil {
		t.Fatal(err)
	}
	if m.K != 4 || len(m.Mixing) != 4 {
		t.Fatalf("k %d, %d mixing columns; want 4", m.K, len(m.Mixing))
	}
}

// `fit hmm` (Gaussian observations, the moment fit alone) with k above the
// dimension fits the d states the moments give and warns, exit 0, where it
// refused before; the states are the true ones.
func TestHMMFewerStates(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "hmm", "--seqs", "60000", "--len", "3", "--d", "3", "--k", "3", "--seed", "1", "--out", p("s.parquet"), "--truth", p("truth.json"), "--progress", "off")
	code, _, errs := streamfit(t, "fit", "hmm", "--input", p("s.parquet"), "--group-column", "group", "--k", "5", "--seed", "2", "--em-passes", "0", "--out", p("m.json"), "--progress", "off")
	if code != 0 || !strings.Contains(errs, "warning: the moments give 3 of the 5 states (k=5 exceeds the dimension d=3)") {
		t.Fatalf("--k 5 on d=3: exit %d, stderr %q; want success and a warning", code, errs)
	}
	var m struct {
		K int         `json:"k"`
		O [][]float64 `json:"O"`
	}
	if err := json.Unmarshal(readFile(t, p("m.json")), &m); err != nil {
		t.Fatal(err)
	}
	if m.K != 3 || len(m.O) != 3 {
		t.Fatalf("k %d, %d emission rows; want 3", m.K, len(m.O))
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "eval", "--model", p("m.json"), "--truth", p("truth.json"), "--json")), &ev); err != nil {
		t.Fatal(err)
	}
	t.Logf("eval: %v", ev)
	if o, tr := ev["O_rel_err"].(float64), ev["T_rel_err"].(float64); !(o <= 0.05 && tr <= 0.1) {
		t.Errorf("O_rel_err %v, T_rel_err %v: want ≤ 0.05 and ≤ 0.1", ev["O_rel_err"], ev["T_rel_err"])
	}
}
