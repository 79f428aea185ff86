package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
)

// infer on an HMM writes each time step's state posteriors, the ones
// hmm.Posteriors gives (the CSV holds every float exactly), for Gaussian
// and one-hot rows, whole or --top; a sequence file without sequence ids is
// refused naming what is missing.
func TestInferHMMPosteriors(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, kind := range []string{"gaussian", "discrete"} {
		gen := []string{"gen", "hmm", "--seqs", "60", "--len", "7", "--d", "4", "--k", "3", "--seed", "5", "--out", p(kind + ".parquet"), "--truth", p(kind + ".json"), "--progress", "off"}
		if kind == "discrete" {
			gen = append(gen, "--discrete")
		}
		mustRun(t, gen...)
		mustRun(t, "infer", "--model", p(kind+".json"), "--input", p(kind+".parquet"), "--batch-rows", "50", "--progress", "off", "--out", p(kind+".csv"))
		data, _ := os.ReadFile(p(kind + ".csv"))
		if !strings.HasPrefix(string(data), "row,component_0,component_1,component_2\n") {
			t.Fatalf("%s: header %q", kind, strings.SplitN(string(data), "\n", 2)[0])
		}
		got := parseShareRows(t, data)

		m, err := hmm.Read(p(kind + ".json"))
		if err != nil {
			t.Fatal(err)
		}
		src, err := stream.OpenDense(p(kind+".parquet"), stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		err = hmm.Posteriors(context.Background(), m, src, 1, func(first int64, rows int, shares []float64) error {
			for r := range rows {
				want = append(want, append([]float64(nil), shares[r*m.K:(r+1)*m.K]...))
			}
			return nil
		})
		stream.Close(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 420 || len(want) != 420 {
			t.Fatalf("%s: %d rows written, %d from the library; want 420", kind, len(got), len(want))
		}
		for r := range got {
			for j := range got[r] {
				if got[r][j] != want[r][j] {
					t.Fatalf("%s: row %d: %v, the library %v", kind, r, got[r], want[r])
				}
			}
		}
		top := mustRun(t, "infer", "--model", p(kind+".json"), "--input", p(kind+".parquet"), "--progress", "off", "--out", "-", "--top", "2")
		if lines := strings.Split(strings.TrimSpace(top), "\n"); lines[0] != "row,component,share" || len(lines) != 1+2*420 {
			t.Fatalf("%s --top 2: header %q, %d lines", kind, lines[0], len(lines))
		}
	}
	// The same rows without their sequence ids.
	mustRun(t, "gen", "gmm", "--rows", "30", "--d", "4", "--k", "3", "--out", p("flat.parquet"), "--truth", p("flat.json"), "--progress", "off")
	code, _, errs := streamfit(t, "infer", "--model", p("gaussian.json"), "--input", p("flat.parquet"), "--progress", "off", "--out", p("flat.csv"))
	if code != 1 || !strings.Contains(errs, "sequence id") {
		t.Errorf("rows without sequence ids: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(p("flat.csv")); err == nil {
		t.Error("a refused infer created its output")
	}
}
