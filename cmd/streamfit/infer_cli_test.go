package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestInferAndHeldOut runs fit → infer → eval --heldout on a generated
// corpus: one row of k shares summing to 1 per document in input order,
// the same Parquet bytes whatever --workers; the fitted model's held-out
// perplexity is close to the true topics'; bad calls leave no output.
func TestInferAndHeldOut(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "3000", "--vocab", "300", "--k", "3", "--doc-len", "50", "--seed", "6",
		"--out", p("docword.train.txt"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "gen", "lda", "--docs", "1001", "--vocab", "300", "--k", "3", "--doc-len", "50", "--seed", "6",
		"--out", p("docword.test.txt"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "fit", "lda", "--input", p("docword.train.txt"), "--k", "3", "--progress", "off", "--out", p("m.json"))
	var ref []byte
	for _, workers := range []string{"1", "3"} {
		mustRun(t, "infer", "--model", p("m.json"), "--input", p("docword.test.txt"), "--workers", workers,
			"--batch-rows", "100", "--progress", "off", "--out", p("theta.parquet"))
		got, err := os.ReadFile(p("theta.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = got
		} else if !bytes.Equal(got, ref) {
			t.Errorf("theta.parquet with --workers %s differs from --workers 1", workers)
		}
	}
	_, tbl := readParquetTable(t, p("theta.parquet"))
	if tbl.NumRows() != 1001 || tbl.NumCols() != 2 {
		t.Fatalf("table of %d rows, %d columns; want 1001 and 2", tbl.NumRows(), tbl.NumCols())
	}
	doc := tbl.Column(0).Data().Chunk(0).(*array.Int64)
	theta := tbl.Column(1).Data().Chunk(0).(*array.List)
	vals := theta.ListValues().(*array.Float64)
	for i := range doc.Len() {
		lo, hi := theta.ValueOffsets(i)
		s := 0.0
		for j := lo; j < hi; j++ {
			s += vals.Value(int(j))
		}
		if doc.Value(i) != int64(i) || hi-lo != 3 || math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d: doc %d, %d shares summing to %g", i, doc.Value(i), hi-lo, s)
		}
	}

	score := func(model string) float64 {
		var h struct {
			Docs       int64   `json:"docs"`
			Perplexity float64 `json:"perplexity"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "eval", "--model", model, "--heldout", p("docword.test.txt"), "--json")), &h); err != nil {
			t.Fatal(err)
		}
		if h.Docs != 1001 {
			t.Errorf("%s: %d documents scored, want 1001", model, h.Docs)
		}
		return h.Perplexity
	}
	fitted, truth := score(p("m.json")), score(p("truth.json"))
	t.Logf("held-out perplexity: fitted %.2f, true topics %.2f", fitted, truth)
	if fitted > truth*1.05 || fitted < truth*0.95 {
		t.Errorf("held-out perplexity of the fit %.2f, of the true topics %.2f", fitted, truth)
	}

	// Bad calls: a usage error, and a vocabulary that does not match.
	if code, _, _ := streamfit(t, "infer", "--model", p("m.json"), "--out", p("bad.parquet")); code != 2 {
		t.Errorf("infer without --input: exit %d, want 2", code)
	}
	mustRun(t, "gen", "lda", "--docs", "100", "--vocab", "200", "--k", "3", "--out", p("docword.other.txt"), "--progress", "off")
	code, _, msg := streamfit(t, "infer", "--model", p("m.json"), "--input", p("docword.other.txt"), "--out", p("bad.parquet"), "--progress", "off")
	if code != 1 || !strings.Contains(msg, "300 words") {
		t.Errorf("infer with another vocabulary: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(p("bad.parquet")); !os.IsNotExist(err) {
		t.Error("a failed infer left its output file")
	}
}
