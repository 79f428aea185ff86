package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// writeDocword writes documents lo..hi−1 of docs as a docword file.
func writeDocword(t *testing.T, path string, docs *stream.Docs, d, lo, hi int) {
	t.Helper()
	writeDocsFile(t, path, docs, lo, hi, stream.WriteOptions{Terms: d})
}

// writeDocsFile writes documents lo..hi−1 of docs in the format of path.
func writeDocsFile(t *testing.T, path string, docs *stream.Docs, lo, hi int, o stream.WriteOptions) {
	t.Helper()
	w, err := stream.Create(path, o)
	if err != nil {
		t.Fatal(err)
	}
	b := stream.NewDocs(0)
	for i := lo; i < hi; i++ {
		b.AppendDoc(docs.Doc(i))
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStatsMergeCommands runs stats (phase 1 per shard), merge, stats (phase
// 2 per shard), merge and the fit from statistics through the command entry
// points, and compares the model with lda.Fit on the union of the shards.
func TestStatsMergeCommands(t *testing.T) {
	ctx := context.Background()
	const d, k = 150, 4
	docs := corpusDocs(t, synth.LDAConfig{Docs: 3000, Vocab: d, K: k, Alpha0: 1, DocLen: 60, Seed: 31})
	p := tempPaths(t)
	n := docs.Len()
	writeDocword(t, p("docword.a.txt"), docs, d, 0, n/3)
	writeDocword(t, p("docword.b.txt"), docs, d, n/3, 2*n/3)
	writeDocword(t, p("docword.c.txt"), docs, d, 2*n/3, n)
	writeDocword(t, p("docword.all.txt"), docs, d, 0, n)

	var stderr bytes.Buffer
	cmd := func(want int, args ...string) string {
		t.Helper()
		stderr.Reset()
		if got := run(ctx, args, &stderr); got != want {
			t.Fatalf("streamfit %s: exit %d, want %d: %s", strings.Join(args, " "), got, want, stderr.String())
		}
		return stderr.String()
	}
	common := []string{"--k", "4", "--alpha0", "1", "--seed", "3", "--workers", "2", "--progress", "off"}
	// Shard A is one file, shard B two files.
	cmd(0, append([]string{"stats", "--phase", "1", "--out", p("a1.stats"), p("docword.a.txt")}, common...)...)
	cmd(0, append([]string{"stats", "--phase", "1", "--out", p("b1.stats"), p("docword.b.txt"), p("docword.c.txt")}, common...)...)
	cmd(0, "merge", "--out", p("all1.stats"), p("a1.stats"), p("b1.stats"))
	cmd(0, append([]string{"stats", "--phase", "2", "--basis", p("all1.stats"), "--out", p("a2.stats"), p("docword.a.txt")}, common...)...)
	cmd(0, append([]string{"stats", "--phase", "2", "--basis", p("all1.stats"), "--out", p("b2.stats"), p("docword.b.txt"), p("docword.c.txt")}, common...)...)
	cmd(0, "merge", "--out", p("all2.stats"), p("a2.stats"), p("b2.stats"))

	m, err := fitFromStats(ctx, p("all2.stats"), lda.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	src, err := stream.Open(p("docword.all.txt"), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	ref, err := lda.Fit(ctx, src, lda.Config{K: k, Alpha0: 1, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Fit.Docs != ref.Fit.Docs {
		t.Errorf("fit from statistics saw %d documents, Fit %d", m.Fit.Docs, ref.Fit.Docs)
	}
	// Sums in a different order (three files, two shards) and batches cut
	// elsewhere, whose float32 partial sums round differently (relative
	// 6e-8 per operation): see lda.TestStatsMergeEqualsUnion for the
	// tolerance, here relative to the largest probability.
	var scale float64
	for i := range k {
		for j := range d {
			scale = math.Max(scale, ref.Topics[i][j])
		}
	}
	for i := range k {
		for j := range d {
			if diff := math.Abs(m.Topics[i][j] - ref.Topics[i][j]); diff > 1e-5*scale {
				t.Fatalf("topic %d word %d: %g from statistics, %g from Fit", i, j, m.Topics[i][j], ref.Topics[i][j])
			}
		}
	}

	// Refusals: incompatible merges name the field; damaged files are refused.
	msg := cmd(1, "merge", "--out", p("bad.stats"), p("a1.stats"), p("a2.stats"))
	if !strings.Contains(msg, "phase is 2 in "+p("a2.stats")+" but 1 in "+p("a1.stats")) {
		t.Errorf("merge of phases 1 and 2: %q", msg)
	}
	cmd(0, append([]string{"stats", "--phase", "1", "--out", p("a1k5.stats"), p("docword.a.txt")}, append(common, "--k", "5")...)...)
	if msg := cmd(1, "merge", "--out", p("bad.stats"), p("a1.stats"), p("a1k5.stats")); !strings.Contains(msg, "k is 5 in") {
		t.Errorf("merge of k=4 and k=5: %q", msg)
	}
	data, _ := os.ReadFile(p("a1.stats"))
	os.WriteFile(p("cut.stats"), data[:len(data)/2], 0o644)
	if msg := cmd(1, "merge", "--out", p("bad.stats"), p("cut.stats")); !strings.Contains(msg, "truncated") {
		t.Errorf("merge of a truncated file: %q", msg)
	}
	if _, err := os.Stat(p("bad.stats")); !os.IsNotExist(err) {
		t.Errorf("a failed merge left %s", p("bad.stats"))
	}
	cmd(2, "stats", "--phase", "2", p("docword.a.txt"))
	// Phase 2 takes k, α₀ and the seed from its basis; a conflicting flag
	// names the basis file.
	cmd(0, "stats", "--phase", "2", "--basis", p("all1.stats"), "--out", p("a2b.stats"), "--progress", "off", p("docword.a.txt"))
	if a, b := readFile(t, p("a2.stats")), readFile(t, p("a2b.stats")); !bytes.Equal(a, b) {
		t.Error("phase 2 without repeated flags differs from phase 2 with them")
	}
	if msg := cmd(2, "stats", "--phase", "2", "--basis", p("all1.stats"), "--k", "5", "--out", p("bad.stats"), p("docword.a.txt")); !strings.Contains(msg, "--k=5 differs from "+p("all1.stats")) {
		t.Errorf("phase 2 with a conflicting --k: %q", msg)
	}
	// Nightly drift check: the basis the merged phase 1 gives now against
	// the one stored in the running phase-2 statistics (the same here).
	writeDocword(t, p("docword.new.txt"), docs, d, n/6, n/2)
	said := cmd(0, append([]string{"stats", "--phase", "2", "--basis", p("all1.stats"), "--previous", p("all2.stats"), "--out", p("c2.stats"), p("docword.new.txt")}, common...)...)
	if !strings.Contains(said, "reusing the basis") {
		t.Errorf("drift check: %q", said)
	}
	t.Log(strings.TrimSpace(said))
	cmd(0, "merge", "--out", p("all2b.stats"), p("all2.stats"), p("c2.stats"))
	if _, err := fitFromStats(ctx, p("all1.stats"), lda.Config{}); err == nil || !strings.Contains(err.Error(), "phase-2") {
		t.Errorf("fit from phase-1 statistics: %v", err)
	}
}

// statsArgs is the start of a `streamfit stats` command line writing the
// statistics of phase to out, against basis when given (names under p).
func statsArgs(p func(string) string, phase, out, basis string) []string {
	args := []string{"stats", "--phase", phase, "--out", p(out)}
	if basis != "" {
		args = append(args, "--basis", p(basis))
	}
	return args
}

// mergeFiles merges the statistics files into out (names under p) and
// returns the merged file.
func mergeFiles(t *testing.T, p func(string) string, out string, files ...string) []byte {
	t.Helper()
	args := []string{"merge", "--out", p(out)}
	for _, f := range files {
		args = append(args, p(f))
	}
	mustRun(t, args...)
	return readFile(t, p(out))
}

// fitFrom fits from the statistics file stats into out (names under p,
// --no-timing) and returns model.json.
func fitFrom(t *testing.T, p func(string) string, stats, out string) []byte {
	t.Helper()
	mustRun(t, "fit", "lda", "--from-stats", p(stats), "--no-timing", "--progress", "off", "--out", p(out))
	return readFile(t, p(out))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// corpusDocs generates the documents of an LDA corpus.
func corpusDocs(t *testing.T, cfg synth.LDAConfig) *stream.Docs {
	t.Helper()
	c, err := synth.NewLDA(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := stream.Collect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// tempPaths returns a function naming files in a new temporary directory.
func tempPaths(t *testing.T) func(string) string {
	dir := t.TempDir()
	return func(name string) string { return filepath.Join(dir, name) }
}
