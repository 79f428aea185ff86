package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// streamfit runs the command in-process and returns its exit status, stdout and
// stderr.
func streamfit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r, w, _ := os.Pipe()
	old := os.Stdout
	os.Stdout = w
	var errb bytes.Buffer
	var stderr io.Writer = &errb
	if alsoStderr != nil {
		stderr = io.MultiWriter(&errb, alsoStderr)
	}
	code := run(context.Background(), args, stderr)
	w.Close()
	os.Stdout = old
	out, _ := io.ReadAll(r)
	return code, string(out), errb.String()
}

// alsoStderr, when set, gets a copy of what the commands streamfit runs
// write on stderr (their summaries and advice).
var alsoStderr io.Writer

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := streamfit(t, args...)
	if code != 0 {
		t.Fatalf("streamfit %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// The round trip docword → Parquet → Arrow → Arrow stream → docword is exact,
// byte for byte on the docword side.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "700", "--vocab", "300", "--k", "4", "--doc-len", "30", "--out", p("docword.a.txt"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "convert", p("docword.a.txt"), p("a.parquet"), "--progress", "off")
	mustRun(t, "convert", p("a.parquet"), p("a.arrow"), "--layout", "pairs", "--progress", "off")
	mustRun(t, "convert", p("a.arrow"), p("a.arrows"), "--layout", "long", "--progress", "off")
	mustRun(t, "convert", p("a.arrows"), p("docword.b.txt.zst"), "--progress", "off")
	mustRun(t, "convert", p("docword.b.txt.zst"), p("docword.b.txt"), "--progress", "off")
	a, _ := os.ReadFile(p("docword.a.txt"))
	b, _ := os.ReadFile(p("docword.b.txt"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("round trip changed the corpus (%d vs %d bytes)", len(a), len(b))
	}
	var in inspection
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", p("a.parquet"), "--json", "--progress", "off")), &in); err != nil {
		t.Fatal(err)
	}
	if in.Rows != 700 || in.Terms != 300 || in.Format != "parquet" || in.Lengths == nil || in.Lengths.Min < 3 {
		t.Fatalf("inspect: %+v", in)
	}
}

// gen → fit → eval → topics on a small corpus recovers the topics.
func TestFitEval(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "8000", "--vocab", "200", "--k", "5", "--doc-len", "100", "--seed", "3", "--out", p("c.parquet"), "--truth", p("truth.json"))
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "5", "--out", p("m1.json"), "--seed", "9")
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "5", "--out", p("m2.json"), "--seed", "9")
	a, _ := os.ReadFile(p("m1.json"))
	b, _ := os.ReadFile(p("m2.json"))
	// Seconds differ between runs; everything else must not.
	strip := func(s []byte) string {
		var m map[string]any
		json.Unmarshal(s, &m)
		delete(m["fit"].(map[string]any), "seconds")
		out, _ := json.Marshal(m)
		return string(out)
	}
	if strip(a) != strip(b) {
		t.Fatal("same input and seed gave different models")
	}
	var e struct {
		MeanL1 float64 `json:"mean_l1"`
		Found  int     `json:"found"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "eval", "--model", p("m1.json"), "--truth", p("truth.json"), "--json")), &e); err != nil {
		t.Fatal(err)
	}
	if e.Found != 5 || e.MeanL1 > 0.15 {
		t.Fatalf("eval: %+v", e)
	}
	if out := mustRun(t, "topics", "--model", p("m1.json"), "--top", "3"); strings.Count(out, "\n") != 5 {
		t.Fatalf("topics printed:\n%s", out)
	}
}

// Bad input: a clear message naming the file, a non-zero exit, and no output
// file left behind.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("empty.parquet"), nil, 0o644)
	os.WriteFile(p("docword.bad.txt"), []byte("2\n5\n3\n1 1 2\n2 9 1\n1 2 1\n"), 0o644)
	os.WriteFile(p("docword.neg.txt"), []byte("1\n5\n1\n1 1 -2\n"), 0o644)
	os.WriteFile(p("noise.bin"), []byte{0x00, 0x01, 0x02, 0xff}, 0o644)
	mustRun(t, "gen", "lda", "--docs", "300", "--vocab", "50", "--k", "3", "--doc-len", "20", "--out", p("ok.parquet"))
	full, _ := os.ReadFile(p("ok.parquet"))
	os.WriteFile(p("trunc.parquet"), full[:len(full)/2], 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"inspect", p("empty.parquet")}, "empty"},
		{[]string{"convert", p("docword.bad.txt"), p("out.parquet")}, "line 5"},
		{[]string{"convert", p("docword.neg.txt"), p("out.parquet")}, "line 4"},
		{[]string{"convert", p("trunc.parquet"), p("out.arrow")}, "trunc.parquet"},
		{[]string{"inspect", p("noise.bin")}, "format"},
		{[]string{"fit", "lda", "--input", p("ok.parquet"), "--k", "50", "--out", p("out.json")}, "k=50"},
		{[]string{"fit", "lda", "--input", p("ok.parquet"), "--k", "3", "--alpha0", "0", "--out", p("out.json")}, "alpha0"},
		{[]string{"fit", "lda", "--input", p("missing.parquet"), "--k", "3", "--out", p("out.json")}, "missing.parquet"},
		{[]string{"fit", "lda", "--input", p("ok.parquet"), "--solver", "magic", "--out", p("out.json")}, "magic"},
		{[]string{"nonsense"}, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := streamfit(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("streamfit %s: exit %d, stderr %q; want non-zero and %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "out") || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("bad input left %s behind", e.Name())
		}
	}
}

// TestSettingHint: the CLI names the flag of every setting a library message
// names as a whole word, and only those.
func TestSettingHint(t *testing.T) {
	for msg, want := range map[string]string{
		"raise SketchLen to 64 or SketchCount": " (SketchLen is --sketch-len; SketchCount is --sketch-count)",
		"another power pass (PowerIters = 2)":  " (PowerIters is --power-iters)",
		"more Iters, another Solver":           " (Iters is --iters; Solver is --solver)",
		"give it (stream.Options.VocabPath)":   " (stream.Options.VocabPath is --vocab)",
		"ViewsFlag and SketchLength":           "",
		"no setting here":                      "",
	} {
		if got := settingHint(msg); got != want {
			t.Errorf("settingHint(%q) = %q, want %q", msg, got, want)
		}
	}
}
