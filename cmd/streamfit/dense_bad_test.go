package main

import (
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/lda"

	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// writeDense writes rows (and ids, when given) as a Parquet table.
func writeDense(t *testing.T, path string, cols int, data []float64, ids []int64) {
	t.Helper()
	w, err := stream.CreateDense(path, stream.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&stream.Dense{Rows: len(data) / cols, Cols: cols, Data: data, Group: ids}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// oneHot returns n one-hot rows over k states (state i%k for row i).
func oneHot(n, k int) []float64 {
	out := make([]float64, n*k)
	for i := range n {
		out[i*k+i%k] = 1
	}
	return out
}

// Bad input to the dense models: exit status 1 (2 for a bad flag), a
// message naming the file and the row and column, and no output file.
func TestDenseBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	data := make([]float64, 40*4)
	for i := range data {
		data[i] = float64(i%7) - 3 + 0.1*float64(i%5)
	}
	nan := append([]float64(nil), data...)
	nan[5*4+2] = math.NaN()
	writeDense(t, p("nan.parquet"), 4, nan, nil)
	writeDense(t, p("plain.parquet"), 4, data, nil)
	// Sets: 0 has 3 rows, 1 has 2.
	writeDense(t, p("small-set.parquet"), 3, oneHot(5, 3), []int64{0, 0, 0, 1, 1})
	// Set 0 comes back after set 1: its rows are not contiguous.
	writeDense(t, p("split-set.parquet"), 3, oneHot(9, 3), []int64{0, 0, 0, 1, 1, 1, 0, 0, 0})
	// A sequence id that goes back.
	writeDense(t, p("split-seq.parquet"), 4, data[:9*4], []int64{2, 2, 2, 5, 5, 5, 2, 2, 2})
	// Real-valued rows with set ids are not a chain's one-hot states.
	writeDense(t, p("real-sets.parquet"), 4, data[:6*4], []int64{0, 0, 0, 1, 1, 1})
	mustRun(t, "gen", "gmm", "--rows", "500", "--d", "5", "--k", "2", "--out", p("g.parquet"), "--truth", p("g-truth.json"), "--progress", "off")
	mustRun(t, "gen", "gmm", "--rows", "500", "--d", "6", "--k", "2", "--out", p("g6.parquet"), "--truth", p("g6-truth.json"), "--progress", "off")
	mustRun(t, "fit", "gmm", "--input", p("g.parquet"), "--k", "2", "--out", p("g-model.json"), "--progress", "off")
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"nan", []string{"fit", "gmm", "--input", p("nan.parquet"), "--k", "2"}, 1, []string{"nan.parquet", "row 5", "2", "NaN"}},
		{"nan-ica", []string{"fit", "ica", "--input", p("nan.parquet"), "--k", "2"}, 1, []string{"nan.parquet", "row 5", "2", "NaN"}},
		{"nan-multiview", []string{"fit", "multiview", "--input", p("nan.parquet"), "--k", "1"}, 1, []string{"nan.parquet", "row 5", "2", "NaN"}},
		{"k>d", []string{"fit", "gmm", "--input", p("plain.parquet"), "--k", "9", "--em-passes", "0"}, 1, []string{"k=9", "d=4", "k ≤ d"}},
		{"k>d-hmm-snapshot", []string{"fit", "hmm-snapshot", "--input", p("real-sets.parquet"), "--group-column", "group", "--k", "9"}, 1, []string{"k=9", "d=4"}},
		{"small-set", []string{"fit", "markov", "--input", p("small-set.parquet"), "--group-column", "group"}, 1, []string{"small-set.parquet", "row 3", "set 1 has 2 rows"}},
		{"split-set", []string{"fit", "markov", "--input", p("split-set.parquet"), "--group-column", "group"}, 1, []string{"split-set.parquet", "row 6", "set id 0 follows set id 1"}},
		{"split-seq", []string{"fit", "hmm", "--input", p("split-seq.parquet"), "--group-column", "group", "--k", "1"}, 1, []string{"split-seq.parquet", "row 6", "sequence id 2 follows"}},
		{"not-one-hot", []string{"fit", "markov", "--input", p("real-sets.parquet"), "--group-column", "group"}, 1, []string{"real-sets.parquet", "row 0", "one-hot"}},
		{"missing-id-column", []string{"fit", "markov", "--input", p("plain.parquet"), "--group-column", "set"}, 1, []string{"plain.parquet", "set"}},
		{"no-id-flag", []string{"fit", "hmm-snapshot", "--input", p("plain.parquet"), "--k", "2"}, 2, []string{"--group-column"}},
		{"views-range", []string{"fit", "multiview", "--input", p("plain.parquet"), "--k", "1", "--views", "0;1,2;9"}, 1, []string{"column 9", "4"}},
		{"alpha0", []string{"fit", "markov", "--input", p("small-set.parquet"), "--group-column", "group", "--alpha0", "0"}, 2, []string{"--alpha0=0"}},
		{"sigma2", []string{"fit", "hmm-snapshot", "--input", p("real-sets.parquet"), "--group-column", "group", "--k", "2", "--sigma2", "-2"}, 2, []string{"--sigma2=-2"}},
		{"solver", []string{"fit", "gmm", "--input", p("plain.parquet"), "--k", "2", "--solver", "magic"}, 2, []string{"magic"}},
		{"eval-dimension", []string{"eval", "--model", p("g-model.json"), "--truth", p("g6-truth.json")}, 1, []string{"d=5", "d=6"}},
		{"p", []string{"gen", "snapshots", "--k", "3", "--p", "[[0.5,0.5],[0.5,0.5]]", "--out", p("out-p.parquet")}, 2, []string{"P has 2 rows", "k=3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[0] == "fit" {
				args = append(args, "--out", p("out-"+c.name+".json"), "--progress", "off")
			}
			code, _, errs := streamfit(t, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q does not mention %q", errs, w)
				}
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "out") || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("bad input left %s behind", e.Name())
		}
	}
}

// TestTopicOnlyFlags: a flag that only the topic models read (a checkpoint,
// a plan, the row directory, …) is refused for another model with exit 2
// instead of being ignored: a --checkpoint that never resumes would be worse
// than none.
func TestTopicOnlyFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.parquet")
	writeDense(t, in, 3, oneHot(60, 3), nil)
	out := filepath.Join(dir, "m.json")
	e := &env{stdout: io.Discard, stderr: io.Discard}
	ldaFlags := newFitFlags(e, lda.Kind).fs
	gmmFlags := newFitFlags(e, gmm.Kind).fs
	var topicOnly []string
	ldaFlags.VisitAll(func(f *flag.Flag) {
		if gmmFlags.Lookup(f.Name) == nil && f.Name != "alpha0" {
			topicOnly = append(topicOnly, f.Name)
		}
	})
	if len(topicOnly) < 10 {
		t.Fatalf("only %d flags of lda are not flags of gmm: %q", len(topicOnly), topicOnly)
	}
	for _, name := range topicOnly {
		arg := "--" + name + "=1"
		switch name {
		case "implicit", "no-timing":
			arg = "--" + name
		case "plan":
			arg = "--plan=explicit"
		case "checkpoint", "row-dir", "topics-parquet", "from-stats", "vocab", "memory":
			arg = "--" + name + "=" + filepath.Join(dir, "c")
		case "checkpoint-every":
			arg = "--checkpoint-every=1s"
		}
		code, _, msg := streamfit(t, "fit", "gmm", "--input", in, "--columns", "c0,c1,c2", "--k", "2", "--out", out, arg)
		if code != 2 || !strings.Contains(msg, "--"+name+" is for lda, topic, not gmm") {
			t.Errorf("fit gmm %s: exit %d, %q", arg, code, strings.TrimSpace(msg))
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("fit gmm %s wrote %s", arg, out)
		}
	}
}
