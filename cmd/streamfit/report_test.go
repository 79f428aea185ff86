package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReportCommand writes the report of a fitted LDA model with a
// vocabulary and an evaluation file, and of the truth of every dense model
// (truth files read as models); usage errors exit 2, failures 1, and neither
// leaves an output file.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "3000", "--vocab", "200", "--k", "4", "--doc-len", "60", "--out", p("c.parquet"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "4", "--out", p("m.json"), "--progress", "off")
	var vocab strings.Builder
	for i := range 200 {
		fmt.Fprintf(&vocab, "word%d\n", i)
	}
	os.WriteFile(p("vocab.txt"), []byte(vocab.String()), 0o644)
	os.WriteFile(p("eval.json"), []byte(`{"coherence": {"umass": [-1.5, -2, -2.5, -3]}}`), 0o644)
	os.WriteFile(p("heldout.json"), []byte(`{"perplexity": 812.25}`), 0o644)
	mustRun(t, "report", "--model", p("m.json"), "--vocab", p("vocab.txt"), "--eval", p("eval.json"), "--eval", p("heldout.json"), "--out", p("r.html"))
	page, err := os.ReadFile(p("r.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`http-equiv="Content-Security-Policy"`, `"word`, `"coherence: UMass coherence"`, `"evaluation (heldout.json): perplexity","812.2"`, `"scores":[{"name":"held-out perplexity","value":812.2`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %s", want)
		}
	}
	// The SVG namespace is a name, not a resource; no other URL may appear.
	if rest := strings.ReplaceAll(string(page), "http://www.w3.org/2000/svg", ""); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
		t.Error("the report names a URL")
	}

	// --heldout lists the perplexity that eval --heldout prints.
	mustRun(t, "report", "--model", p("m.json"), "--heldout", p("c.parquet"), "--out", p("h.html"))
	_, evalOut, _ := streamfit(t, "eval", "--model", p("m.json"), "--heldout", p("c.parquet"), "--json")
	var ho struct{ Perplexity float64 }
	if err := json.Unmarshal([]byte(evalOut), &ho); err != nil || ho.Perplexity <= 1 {
		t.Fatalf("eval --heldout --json: %v, %q", err, evalOut)
	}
	hpage, _ := os.ReadFile(p("h.html"))
	if want := fmt.Sprintf(`"held-out (c.parquet): perplexity","%s"`, fmtFour(ho.Perplexity)); !strings.Contains(string(hpage), want) {
		t.Errorf("report --heldout lacks %s", want)
	}
	if want := fmt.Sprintf(`"scores":[{"name":"held-out perplexity","value":%s`, fmtFour(ho.Perplexity)); !strings.Contains(string(hpage), want) {
		t.Errorf("report --heldout does not open with the held-out perplexity: lacks %s", want)
	}

	// The single-topic model's page, from the same corpus.
	mustRun(t, "fit", "topic", "--input", p("c.parquet"), "--k", "4", "--out", p("topic.json"), "--progress", "off")
	mustRun(t, "report", "--model", p("topic.json"), "--out", p("topic.html"))
	if page, _ := os.ReadFile(p("topic.html")); !strings.Contains(string(page), `"kind":"topic"`) {
		t.Error("the single-topic model's page does not say its kind")
	}

	gens := [][]string{
		{"gmm", "--rows", "200", "--d", "5", "--k", "2"},
		{"ica", "--rows", "200", "--d", "4", "--k", "3"},
		{"hmm", "--seqs", "50", "--d", "4", "--k", "3"},
		{"snapshots", "--sets", "20", "--per-set", "10", "--k", "3"},
		{"multiview", "--rows", "200", "--k", "2"},
	}
	for _, g := range gens {
		truth := p(g[0] + "-truth.json")
		mustRun(t, append(append([]string{"gen"}, g...), "--out", p(g[0]+".parquet"), "--truth", truth, "--progress", "off")...)
		mustRun(t, "report", "--model", truth, "--out", p(g[0]+".html"))
		if st, err := os.Stat(p(g[0] + ".html")); err != nil || st.Size() < 5000 {
			t.Errorf("%s: report %v, %v", g[0], st, err)
		}
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--model", p("gmm-truth.json"), "--theta", p("x.parquet")}, 2, "does not apply"},
		{[]string{"--model", p("m.json"), "extra"}, 2, "unexpected arguments"},
		{[]string{"--model", p("missing.json")}, 1, "missing.json"},
		{[]string{"--model", p("c.parquet")}, 1, "not a model file"},
		{[]string{"--model", p("m.json"), "--vocab", p("eval.json")}, 1, "d=200"},
		{[]string{"--model", p("m.json"), "--theta", p("c.parquet")}, 1, "c.parquet"},
	} {
		code, _, errs := streamfit(t, append([]string{"report", "--out", p("bad.html")}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("report %v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.msg)
		}
		if _, err := os.Stat(p("bad.html")); err == nil {
			t.Errorf("report %v left an output file", c.args)
		}
	}
}

// fmtFour writes x as the report lists numbers (four significant digits).
func fmtFour(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
