package main

import (
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// TestPassLines: without a terminal, fit lda prints one line per pass over
// the documents on stderr, as many as the model says it took.
func TestPassLines(t *testing.T) {
	dir := t.TempDir()
	in, out := dir+"/c.parquet", dir+"/m.json"
	if code, _, msg := streamfit(t, "gen", "lda", "--docs", "3000", "--vocab", "300", "--k", "4", "--out", in); code != 0 {
		t.Fatal(msg)
	}
	code, _, msg := streamfit(t, "fit", "lda", "--input", in, "--k", "4", "--out", out)
	if code != 0 {
		t.Fatal(msg)
	}
	m, err := models.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(msg, ") done in "); n != m.Fit.Passes || !strings.Contains(msg, "pass 1 (second-moment) done in") {
		t.Errorf("%d pass lines for %d passes:\n%s", n, m.Fit.Passes, msg)
	}
}
