package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// splitParquet writes the documents of the file in into parts of dir,
// cut before the documents at cuts, named part-0.parquet, part-1.parquet, …
func splitParquet(t *testing.T, in, dir string, cuts ...int) {
	t.Helper()
	src, err := stream.Open(in, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	all, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cuts = append(append([]int{0}, cuts...), all.Len())
	for p := range len(cuts) - 1 {
		part := &stream.Docs{Offsets: []int{0}}
		for i := cuts[p]; i < cuts[p+1]; i++ {
			part.AppendDoc(all.Doc(i))
		}
		info := src.Info()
		w, err := stream.Create(filepath.Join(dir, "part-"+strconv.Itoa(p)+".parquet"), stream.WriteOptions{Terms: info.Terms, Vocab: info.Vocab})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A directory of Parquet parts is one input: cut at batch boundaries, the
// fit, the document topics and the held-out score are those of the same
// documents in one file, byte for byte; the files other writers leave
// beside the parts are passed over.
func TestDatasetDirectoryInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "2500", "--vocab", "200", "--k", "4", "--doc-len", "40", "--out", p("all.parquet"), "--truth", p("truth.json"), "--progress", "off")
	parts := p("parts")
	splitParquet(t, p("all.parquet"), parts, 1000, 2000)
	os.WriteFile(filepath.Join(parts, "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(parts, ".part-0.parquet.crc"), []byte("crc"), 0o644)

	if out := mustRun(t, "inspect", parts); !strings.Contains(out, "dataset") || !strings.Contains(out, "2500") {
		t.Errorf("inspect of the parts:\n%s", out)
	}
	for _, in := range []string{"all.parquet", "parts"} {
		mustRun(t, "fit", "lda", "--input", p(in), "--k", "4", "--batch-rows", "1000", "--no-timing", "--progress", "off", "--out", p(in+".json"))
		mustRun(t, "infer", "--model", p("all.parquet.json"), "--input", p(in), "--batch-rows", "1000", "--progress", "off", "--out", p(in+".theta.parquet"))
	}
	for _, suffix := range []string{".json", ".theta.parquet"} {
		a, _ := os.ReadFile(p("all.parquet" + suffix))
		b, _ := os.ReadFile(p("parts" + suffix))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s of the parts differs from that of the whole file", suffix)
		}
	}
	one := mustRun(t, "eval", "--model", p("all.parquet.json"), "--heldout", p("all.parquet"))
	many := mustRun(t, "eval", "--model", p("all.parquet.json"), "--heldout", parts)
	if one != many {
		t.Errorf("held-out score of the parts %q, of the whole file %q", many, one)
	}

	// A stray file is named, and --row-groups (ranges of one file) refused.
	os.WriteFile(filepath.Join(parts, "notes.txt"), []byte("hello"), 0o644)
	if code, _, errs := streamfit(t, "fit", "lda", "--input", parts, "--k", "4", "--out", p("bad.json")); code != 1 || !strings.Contains(errs, "notes.txt") {
		t.Errorf("stray file: exit %d, %q", code, errs)
	}
	os.Remove(filepath.Join(parts, "notes.txt"))
	if code, _, errs := streamfit(t, "stats", "--row-groups", "0:1", "--k", "4", "--out", p("s.stats"), parts); code != 2 || !strings.Contains(errs, "row group") {
		t.Errorf("--row-groups on a dataset: exit %d, %q", code, errs)
	}
}
