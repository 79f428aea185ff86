package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// planFit runs `streamfit fit lda` with args and returns the exit code and
// everything it printed on stderr (the plan) followed by the error message.
func planFit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, _, errs := streamfit(t, append([]string{"fit", "lda", "--progress", "off"}, args...)...)
	return code, errs
}

// TestFitPlanParquet checks the plan on a Parquet file,
// which records its rows but not its entries: the plan estimates the
// entries from the first documents (so the rows on disk are not rejected
// for an unknown disk need), prints the estimate, and a too small tensor
// sketch fails with advice to raise --sketch-len.
func TestFitPlanParquet(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	// Row groups of 5000: the plan's first documents (20,000, in whole
	// batches, which never span two row groups) are not the whole file.
	mustRun(t, "gen", "lda", "--docs", "30000", "--vocab", "300", "--k", "4", "--doc-len", "20", "--seed", "5",
		"--row-group", "5000", "--out", p("c.parquet"), "--truth", p("truth.json"), "--progress", "off")
	for _, plan := range []string{"auto", "implicit"} {
		code, errs := planFit(t, "--input", p("c.parquet"), "--k", "4", "--plan", plan, "--row-dir", dir, "--out", p("m.json"))
		if code != 0 {
			t.Fatalf("--plan %s: exit %d\n%s", plan, code, errs)
		}
		if !strings.Contains(errs, "30000 documents, ≈") || !strings.Contains(errs, "estimated from the first documents") ||
			strings.Contains(errs, "does not fit") {
			t.Errorf("--plan %s: plan without an estimate of the entries, or with a rejected option:\n%s", plan, errs)
		}
	}
	code, errs := planFit(t, "--input", p("c.parquet"), "--k", "4", "--plan", "sketch", "--sketch-len", "8", "--sketch-count", "1", "--out", p("s.json"))
	if code == 0 || !strings.Contains(errs, "raise SketchLen") || !strings.Contains(errs, "SketchLen is --sketch-len") {
		t.Errorf("8×1 sketch: exit %d, want a failure advising --sketch-len:\n%s", code, errs)
	}
}
