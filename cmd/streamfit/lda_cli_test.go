package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/models"
)

// TestLDADeterministic checks the promise of `fit lda`: the same input and
// seed give a byte-identical model.json (and topic Parquet) with
// --no-timing, whatever --workers and whatever the format of the same
// corpus; without it the files differ only in fit.seconds. A fit from the
// statistics of a single shard is the same computation, with the same
// exact totals, and gives the model.json of fit --em-passes 0.
func TestLDADeterministic(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "6000", "--vocab", "400", "--k", "4", "--doc-len", "60", "--seed", "5",
		"--row-group", "700", "--out", p("c.parquet"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "convert", p("c.parquet"), p("docword.c.txt"), "--progress", "off")
	fit := func(out, input, workers string, extra ...string) []byte {
		t.Helper()
		args := append([]string{"fit", "lda", "--input", input, "--k", "4", "--alpha0", "1", "--seed", "9",
			"--workers", workers, "--batch-rows", "500", "--progress", "off", "--out", p(out)}, extra...)
		mustRun(t, args...)
		b, err := os.ReadFile(p(out))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Batches are summed in order, so the batch size matters (it is a
	// property of the input: the format, --batch-rows, --batch-entries) but
	// the number of workers does not. With --batch-entries 30000 the row
	// groups of 700 documents of about 55 entries are cut in batches of
	// about 545 (more than --batch-rows) and the rest.
	refs := map[string][]byte{}
	for _, v := range []struct {
		input string
		extra []string
	}{{p("c.parquet"), nil}, {p("docword.c.txt"), nil}, {p("c.parquet"), []string{"--batch-entries", "30000"}}} {
		input, name := v.input, strings.Join(append([]string{filepath.Base(v.input)}, v.extra...), " ")
		ref := fit("ref.json", input, "2", append([]string{"--no-timing", "--topics-parquet", p("ref.parquet")}, v.extra...)...)
		if bytes.Contains(ref, []byte(`"seconds"`)) {
			t.Error("--no-timing left fit.seconds in model.json")
		}
		if v.extra == nil {
			refs[input] = ref
		}
		refParquet, _ := os.ReadFile(p("ref.parquet"))
		for _, workers := range []string{"1", "3"} {
			got := fit("m.json", input, workers, append([]string{"--no-timing", "--topics-parquet", p("m.parquet")}, v.extra...)...)
			if !bytes.Equal(got, ref) {
				t.Errorf("%s with --workers %s: model.json differs from the one with 2 workers", name, workers)
			}
			if pq, _ := os.ReadFile(p("m.parquet")); !bytes.Equal(pq, refParquet) {
				t.Errorf("%s with --workers %s: topic Parquet differs", name, workers)
			}
		}
	}
	ref := refs[p("c.parquet")]
	timed := fit("timed.json", p("c.parquet"), "1")
	var a, b map[string]any
	json.Unmarshal(timed, &a)
	json.Unmarshal(ref, &b)
	if _, ok := a["fit"].(map[string]any)["seconds"]; !ok {
		t.Error("model.json without --no-timing has no fit.seconds")
	}
	delete(a["fit"].(map[string]any), "seconds")
	if ja, _ := json.Marshal(a); !bytes.Equal(ja, mustJSON(t, b)) {
		t.Error("with timing, model.json differs in more than fit.seconds")
	}

	// The statistics route on one shard: phase 1, phase 2, fit.
	common := []string{"--k", "4", "--alpha0", "1", "--seed", "9", "--workers", "3", "--progress", "off"}
	var out bytes.Buffer
	alsoStderr = &out
	defer func() { alsoStderr = nil }()
	common = append(common, "--batch-rows", "500")
	mustRun(t, append([]string{"stats", "--phase", "1", "--out", p("1.stats"), p("docword.c.txt")}, common...)...)
	mustRun(t, append([]string{"stats", "--phase", "2", "--basis", p("1.stats"), "--out", p("2.stats"), p("docword.c.txt")}, common...)...)
	mustRun(t, "fit", "lda", "--from-stats", p("2.stats"), "--no-timing", "--out", p("stats.json"))
	// The statistics hold no documents for EM passes: compare the
	// spectral fit.
	if got := fit("ref-c.json", p("docword.c.txt"), "2", "--no-timing", "--em-passes", "0"); !bytes.Equal(got, readFile(t, p("stats.json"))) {
		t.Errorf("fit --from-stats of one shard differs from fit --em-passes 0: %.3g relative", modelDiff(t, p("stats.json"), p("ref-c.json")))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readParquetTable opens the Parquet file at path and reads it whole; the
// file and the table are closed and released when the test ends.
func readParquetTable(t *testing.T, path string) (*file.Reader, arrow.Table) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pf.Close() })
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return pf, tbl
}

// TestTopicsParquet reads the topic matrix back: one row per topic in the
// order of model.json, the same α and probabilities, and the metadata.
func TestTopicsParquet(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "3000", "--vocab", "200", "--k", "3", "--doc-len", "60", "--out", p("c.parquet"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "3", "--out", p("m.json"), "--topics-parquet", p("t.parquet"), "--progress", "off")
	m, err := models.Read(p("m.json"))
	if err != nil {
		t.Fatal(err)
	}
	pf, tbl := readParquetTable(t, p("t.parquet"))
	kv := pf.MetaData().KeyValueMetadata()
	for key, want := range map[string]string{"streamfit.model": "lda", "streamfit.k": "3", "streamfit.d": "200",
		"streamfit.alpha0": strconv.FormatFloat(m.Alpha0, 'g', -1, 64)} { // α₀ of the refined α
		if v := kv.FindValue(key); v == nil || *v != want {
			t.Errorf("metadata %s: %v, want %q", key, v, want)
		}
	}
	if tbl.NumRows() != 3 || tbl.NumCols() != 3 {
		t.Fatalf("table of %d rows, %d columns; want 3 and 3", tbl.NumRows(), tbl.NumCols())
	}
	topic := tbl.Column(0).Data().Chunk(0).(*array.Int32)
	alpha := tbl.Column(1).Data().Chunk(0).(*array.Float64)
	probs := tbl.Column(2).Data().Chunk(0).(*array.List)
	vals := probs.ListValues().(*array.Float64)
	for i := range 3 {
		if int(topic.Value(i)) != i || alpha.Value(i) != m.Alpha[i] {
			t.Errorf("row %d: topic %d alpha %g, model.json has %g", i, topic.Value(i), alpha.Value(i), m.Alpha[i])
		}
		lo, hi := probs.ValueOffsets(i)
		if hi-lo != 200 {
			t.Fatalf("row %d has %d probabilities, want 200", i, hi-lo)
		}
		sum := 0.0
		for j := lo; j < hi; j++ {
			if v := vals.Value(int(j)); v != m.Topics[i][j-lo] {
				t.Fatalf("topic %d word %d: %g in Parquet, %g in model.json", i, j-lo, v, m.Topics[i][j-lo])
			}
			sum += vals.Value(int(j))
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("topic %d sums to %g", i, sum)
		}
	}
}

// TestLDABadInput: α₀ that is not a finite positive number is a usage error
// naming the flag; k beyond what the data support warns (on stderr and in
// model.json), and k the data cannot give (6 documents, k=10) fails naming
// the k to lower it to, leaving no output files.
func TestLDABadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "3000", "--vocab", "500", "--k", "3", "--doc-len", "100", "--seed", "5", "--out", p("c.parquet"), "--progress", "off")
	mustRun(t, "gen", "lda", "--docs", "6", "--vocab", "500", "--k", "3", "--doc-len", "100", "--seed", "5", "--out", p("tiny.parquet"), "--progress", "off")
	base := []string{"fit", "lda", "--input", p("c.parquet"), "--out", p("out.json"), "--topics-parquet", p("out.parquet"), "--progress", "off"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--k", "3", "--alpha0", "+Inf"}, 2, "--alpha0=+Inf"},
		{[]string{"--k", "3", "--alpha0", "NaN"}, 2, "--alpha0=NaN"},
		{[]string{"--k", "3", "--alpha0", "0"}, 2, "--alpha0=0"},
		{[]string{"--input", p("tiny.parquet"), "--k", "10"}, 1, "lower k to "},
		{[]string{"--k", "3", "--topics-parquet", filepath.Join(dir, "missing", "t.parquet")}, 1, "missing"},
	} {
		code, _, errs := streamfit(t, append(base, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("fit lda %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
		for _, f := range []string{"out.json", "out.parquet"} {
			if _, err := os.Stat(p(f)); err == nil {
				t.Errorf("fit lda %s left %s", strings.Join(c.args, " "), f)
				os.Remove(p(f))
			}
		}
	}
	code, _, errs := streamfit(t, append(base, "--k", "5")...)
	if code != 0 || !strings.Contains(errs, "warning:") || !strings.Contains(errs, "lower k") {
		t.Fatalf("k=5 on 3 topics: exit %d, stderr %q; want success with warnings", code, errs)
	}
	m, err := models.Read(p("out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Fit.Warnings) == 0 || !strings.Contains(errs, m.Fit.Warnings[0]) {
		t.Errorf("warnings in model.json %q, on stderr %q", m.Fit.Warnings, errs)
	}
}

// TestTopicsRelevance: --relevance 1 is the default ranking by probability,
// and at --relevance 0 each topic's first word is the one of largest lift
// φ_t(w)/p(w) over the α-weighted mixture p, computed here from model.json.
func TestTopicsRelevance(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "150", "--k", "3", "--doc-len", "40", "--out", p("c.parquet"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "3", "--out", p("m.json"), "--progress", "off")
	byProb := mustRun(t, "topics", "--model", p("m.json"), "--top", "5")
	if same := mustRun(t, "topics", "--model", p("m.json"), "--top", "5", "--relevance", "1"); same != byProb {
		t.Fatalf("--relevance 1 printed\n%s\nthe default\n%s", same, byProb)
	}
	m, err := models.Read(p("m.json"))
	if err != nil {
		t.Fatal(err)
	}
	asum := 0.0
	for _, a := range m.Alpha {
		asum += a
	}
	lines := strings.Split(strings.TrimSpace(mustRun(t, "topics", "--model", p("m.json"), "--top", "5", "--relevance", "0")), "\n")
	if len(lines) != m.K {
		t.Fatalf("%d lines for %d topics:\n%s", len(lines), m.K, strings.Join(lines, "\n"))
	}
	for j, line := range lines {
		_, list, _ := strings.Cut(line, ":")
		words := strings.Fields(list)
		if len(words) != 5 {
			t.Fatalf("topic %d: %q, want 5 words", j, line)
		}
		best, bestLift := -1, math.Inf(-1)
		for w, x := range m.Topics[j] {
			mix := 0.0
			for i, row := range m.Topics {
				mix += m.Alpha[i] / asum * row[w]
			}
			if l := math.Log(x / mix); x > 0 && l > bestLift {
				best, bestLift = w, l
			}
		}
		want := "#" + strconv.Itoa(best)
		if m.Vocab != nil {
			want = m.Vocab[best]
		}
		if words[0] != want {
			t.Errorf("topic %d at relevance 0 starts with %s, the largest lift is %s", j, words[0], want)
		}
	}
}
