package beamfit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/streamfit/streamfit/implicit/statsfile"

	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/docword"
	"github.com/streamfit/streamfit/stream/synth"
)

var small = synth.LDAConfig{Docs: 1500, Vocab: 400, K: 4, Alpha0: 1, DocLen: 30, Seed: 11}

// TestPlanRefusesRepeatedInput checks that a file given twice, under its
// name or as a copy, is refused before the pipeline starts, as `streamfit
// merge` refuses statistics that cover it twice; and that globs and
// missing files are reported.
func TestPlanRefusesRepeatedInput(t *testing.T) {
	dir := t.TempDir()
	files := corpus(t, dir, small, 100, parquetParts(700, 800))
	cp := filepath.Join(dir, "copy.parquet")
	if err := os.WriteFile(cp, readFile(t, files[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]string{{files[0], files[1], files[0]}, {files[0], cp}} {
		if _, err := Plan(context.Background(), in, stream.Options{}); !errors.Is(err, statsfile.ErrOverlap) {
			t.Errorf("Plan(%q): %v, want ErrOverlap", in, err)
		}
	}
	got, err := Expand([]string{filepath.Join(dir, "part-*.parquet")})
	if err != nil || len(got) != 2 || got[0] != files[0] || got[1] != files[1] {
		t.Errorf("Expand(part-*.parquet) = %q, %v; want %q", got, err, files)
	}
	// A directory is a dataset: its parts, in order, the files other
	// writers leave beside them passed over.
	parts := filepath.Join(dir, "parts")
	for i, f := range files {
		os.MkdirAll(parts, 0o755)
		if err := os.WriteFile(filepath.Join(parts, "part-"+string(rune('0'+i))+".parquet"), readFile(t, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(parts, "_SUCCESS"), nil, 0o644)
	if got, err := Expand([]string{parts}); err != nil || len(got) != 2 || filepath.Base(got[1]) != "part-1.parquet" {
		t.Errorf("Expand(a dataset directory) = %q, %v", got, err)
	}
	if _, err := Expand([]string{filepath.Join(dir, "none-*.parquet")}); err == nil {
		t.Error("Expand of a glob that matches nothing: no error")
	}
	missing := filepath.Join(dir, "missing.parquet")
	if _, err := Plan(context.Background(), []string{missing}, stream.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Plan of a missing file: %v", err)
	}
}

// TestCombinerRefusesRepeatedUnit checks that the combiner refuses, as
// `streamfit merge` does, statistics of a work unit given twice (units
// built by hand, past Plan's check): the pipeline fails naming the overlap
// and writes nothing.
func TestCombinerRefusesRepeatedUnit(t *testing.T) {
	dir := t.TempDir()
	files := corpus(t, dir, small, 250, parquetParts(750, 750))
	units, err := Plan(context.Background(), files, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := settings(4, 1, 0)
	model := filepath.Join(dir, "model.json")
	p, err := New(Options{Units: append(units, units[1]), Read: stream.Options{BatchRows: readRows}, Fit: s, Out: Output{Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	defer removeLoopbackFiles(time.Now())
	_, err = beam.Run(context.Background(), "prism", p)
	if err == nil || !strings.Contains(err.Error(), "share an input") {
		t.Fatalf("pipeline over a unit given twice: %v, want the merge's refusal", err)
	}
	if _, err := os.Stat(model); err == nil {
		t.Error("a failed pipeline wrote the model")
	}
}

// TestFormatsAndAppend runs the statistics-only pipeline of phase 1 over
// Parquet (row groups), Arrow IPC (record batches) and UCI docword (a whole
// file) inputs, checks the sums against `streamfit stats` over the same
// files, and that `streamfit stats --append` adds a new file to them (the
// nightly step) exactly, and refuses a file they cover.
func TestFormatsAndAppend(t *testing.T) {
	dir := t.TempDir()
	files := corpus(t, dir, small, 100, []part{{"a.parquet", 300}, {"b.arrow", 300}, {"docword.c.txt", 300}, {"d.parquet", 300}, {"e.parquet", 300}})
	inputs, extra := files[:4], files[4]
	units, err := Plan(context.Background(), inputs, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 10 {
		t.Fatalf("%d work units, want 3 row groups + 3 record batches + 1 docword file + 3 row groups", len(units))
	}
	s, common := settings(4, 1, 0)
	p1 := filepath.Join(dir, "p1.stats")
	start := time.Now().Add(-time.Second)
	if err := pipeline(t, inputs, Options{Fit: s, StatsOnly: 1, Out: Output{Stats: p1}}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "beamloopbackworker-*"))
	for _, f := range left {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(start) {
			t.Errorf("the run left the SDK's loopback file %s", f)
		}
	}
	ref := filepath.Join(dir, "ref1.stats")
	run(t, append(append([]string{"stats", "--out", ref}, common...), inputs...)...)
	if !sameSums(t, p1, ref) {
		t.Error("phase-1 statistics of the pipeline differ from streamfit stats over the same files")
	}
	// The nightly step onto the pipeline's statistics.
	appended := filepath.Join(dir, "appended.stats")
	run(t, "stats", "--append", p1, "--out", appended, "--batch-rows", "100", "--progress", "off", extra)
	refAll := filepath.Join(dir, "ref-all.stats")
	run(t, append(append([]string{"stats", "--out", refAll}, common...), files...)...)
	if !sameSums(t, appended, refAll) {
		t.Error("streamfit stats --append onto the pipeline's statistics differs from the statistics of all the files")
	}
	out, err := exec.Command(cli(t), "stats", "--append", p1, "--out", filepath.Join(dir, "twice.stats"), "--progress", "off", files[0]).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already covers") {
		t.Errorf("stats --append of a file the pipeline's statistics cover: %v: %s", err, out)
	}
}
