package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/floats"
)

// The demo's topics read as words: each printed topic's top words come from
// one theme of the built-in word list, and every theme is found once.
func TestDemoTopicsAreThemes(t *testing.T) {
	theme := map[string]string{}
	for _, th := range synth.Themes {
		for _, w := range th.Words {
			theme[w] = th.Name
		}
	}
	out := mustRun(t, "demo", "--docs", "5000", "--k", "6", "--dir", t.TempDir())
	found := map[string]bool{}
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "topic ") {
			continue
		}
		_, words, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("topic line without words: %q", line)
		}
		names := map[string]bool{}
		for _, w := range strings.Fields(words) {
			names[theme[w]] = true
		}
		if len(names) != 1 || names[""] {
			t.Errorf("topic mixes themes %v: %q", names, line)
		}
		for n := range names {
			if found[n] {
				t.Errorf("theme %s found twice", n)
			}
			found[n] = true
		}
	}
	for _, th := range synth.Themes[:6] {
		if !found[th.Name] {
			t.Errorf("theme %s not among the topics:\n%s", th.Name, out)
		}
	}
}

// goSource returns a directory of the Go source tree of the go command
// running the tests: real text (code and its comments) on every machine
// that runs them.
func goSource(t *testing.T, sub string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src", sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	return dir
}

// demo --text on real text: every 10th file held out, the files of the
// whole workflow written, and a topic model that predicts the held-out
// documents' words better than their unigram distribution over the
// fitted documents does.
func TestDemoText(t *testing.T) {
	src := goSource(t, "net")
	files := 0
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != src {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files++
		}
		return nil
	})
	dir := t.TempDir()
	const k = 5
	out := mustRun(t, "demo", "--text", src, "--k", strconv.Itoa(k), "--dir", dir)
	if n := strings.Count(out, "\ntopic "); n != k {
		t.Errorf("%d topic lines, want %d:\n%s", n, k, out)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	rows := func(path string) int64 {
		s, err := stream.Open(path, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close(s)
		return s.Info().Rows
	}
	train, test := rows(p("train.parquet")), rows(p("test.parquet"))
	if train+test != int64(files) || test != int64(files/10) {
		t.Errorf("%d files split into %d and %d, want %d held out", files, train, test, files/10)
	}
	if _, tbl := readParquetTable(t, p("theta.parquet")); tbl.NumRows() != test {
		n := tbl.NumRows()
		t.Errorf("theta.parquet has %d rows, want the %d held-out documents", n, test)
	}
	for _, f := range []string{"vocab.txt", "model.json", "heldout.json", "coherence.json", "report.html"} {
		if _, err := os.Stat(p(f)); err != nil {
			t.Error(err)
		}
	}
	var h lda.HeldOut
	b, err := os.ReadFile(p("heldout.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	// The unigram model: one topic, the fitted documents' word frequencies.
	trainSrc, err := stream.Open(p("train.parquet"), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(trainSrc)
	uni := make([]float64, trainSrc.Info().Terms)
	for batch, err := range trainSrc.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range batch.Len() {
			terms, counts := batch.Doc(i)
			for j, w := range terms {
				uni[w] += float64(counts[j])
			}
		}
	}
	floats.Scale(1/floats.Sum(uni), uni)
	testSrc, err := stream.Open(p("test.parquet"), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(testSrc)
	u, err := lda.Perplexity(context.Background(), testSrc, [][]float64{uni}, []float64{1}, lda.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(h.Perplexity < 0.9*u.Perplexity) {
		t.Errorf("held-out perplexity %.1f, unigram %.1f: the topics do not predict the held-out words", h.Perplexity, u.Perplexity)
	}
	t.Logf("held-out perplexity %.1f against the unigram's %.1f", h.Perplexity, u.Perplexity)
}

// demo --text refuses what cannot run, naming the input, and leaves nothing
// of the run in --dir.
func TestDemoTextRefusals(t *testing.T) {
	few := t.TempDir()
	for i := range 4 {
		os.WriteFile(filepath.Join(few, fmt.Sprintf("d%d.txt", i)), []byte("alpha beta gamma delta alpha beta"), 0o644)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing", []string{"--text", filepath.Join(few, "nothing")}, 1, "nothing"},
		{"too few documents", []string{"--text", few}, 1, few},
		{"generator flag", []string{"--text", few, "--docs", "10"}, 2, "--docs"},
		{"text flag alone", []string{"--stop-words", "none"}, 2, "--stop-words"},
	} {
		dir := t.TempDir()
		code, _, errs := streamfit(t, append([]string{"demo", "--dir", dir}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q; want exit %d naming %q", c.name, code, errs, c.code, c.want)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: left %d files in --dir", c.name, len(left))
		}
	}
}
