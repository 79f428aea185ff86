package beamfit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/streamfit/streamfit/implicit/statsfile"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// gmmData writes GMM samples as n Parquet files of rows rows each, in row
// groups of rowGroup rows, and all of them as one more file, all.parquet;
// it returns the parts' paths.
func gmmData(t *testing.T, dir string, cfg synth.GMMConfig, n int, rows int64, rowGroup int) []string {
	t.Helper()
	cfg.Rows, cfg.BatchRows = int64(n)*rows, 50
	g, err := synth.NewGMM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return denseFiles(t, dir, g.Rows, rows, rowGroup)
}

// denseFiles writes the dense rows of gen as Parquet files of rows rows
// each (cut at the generator's batches, which must divide rows), in row
// groups of rowGroup rows, and all of them as one more file, all.parquet;
// it returns the parts' paths.
func denseFiles(t *testing.T, dir string, gen func(context.Context) iter.Seq2[*stream.Dense, error], rows int64, rowGroup int) []string {
	t.Helper()
	open := func(name string) stream.DenseWriter {
		w, err := stream.CreateDense(filepath.Join(dir, name), stream.WriteOptions{RowGroupRows: rowGroup})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	all := open("all.parquet")
	var files []string
	var w stream.DenseWriter
	for b, err := range gen(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Start >= int64(len(files))*rows {
			if b.Start != int64(len(files))*rows {
				t.Fatalf("a batch from row %d spans the end of a file at row %d", b.Start, int64(len(files))*rows)
			}
			if w != nil {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			files = append(files, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", len(files))))
			w = open(filepath.Base(files[len(files)-1]))
		}
		for _, x := range []stream.DenseWriter{w, all} {
			if err := x.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		b.Release()
	}
	for _, x := range []stream.DenseWriter{w, all} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestPipelineGMM runs the GMM fit on prism over 4 Parquet files of 3 row
// groups each (12 work units): the model is byte-identical to `streamfit
// fit gmm` over the union of the files in one file, and to `fit gmm
// --from-stats` of the statistics `streamfit stats` computes over the
// files; the merged pass-2 statistics hold the same sums as stats's.
func TestPipelineGMM(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"common", []string{"--k", "3", "--seed", "5"}},
		{"differing", []string{"--k", "3", "--seed", "5", "--differing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := settingsOf(t, "gmm", append([]string{"--em-passes", "0"}, c.flags...)...)
			s.Workers = 2
			files := gmmData(t, dir, synth.GMMConfig{D: 6, K: 3, Seed: 7, Differing: slices.Contains(c.flags, "--differing")}, 4, 600, 200)
			units, err := PlanDense(context.Background(), files, stream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != 12 {
				t.Fatalf("%d work units, want 4 files × 3 row groups", len(units))
			}
			model, p2 := filepath.Join(dir, "model.json"), filepath.Join(dir, "p2.stats")
			if err := pipeline(t, files, Options{Fit: s, Out: Output{Model: model, Stats: p2, NoTiming: true}}); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, model)
			common := append([]string{"--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--progress", "off"}, c.flags...)
			whole := filepath.Join(dir, "whole.json")
			run(t, append([]string{"fit", "gmm", "--em-passes", "0", "--no-timing", "--progress", "off", "--input", filepath.Join(dir, "all.parquet"),
				"--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--out", whole}, c.flags...)...)
			if want := readFile(t, whole); !bytes.Equal(got, want) {
				t.Errorf("the pipeline's model differs from streamfit fit gmm over the union:\n%s\n%s", got, want)
			}
			r1, r2, ref := filepath.Join(dir, "ref1.stats"), filepath.Join(dir, "ref2.stats"), filepath.Join(dir, "ref.json")
			run(t, append(append([]string{"stats", "gmm", "--phase", "1", "--out", r1}, common...), files...)...)
			run(t, append(append([]string{"stats", "gmm", "--phase", "2", "--basis", r1, "--out", r2}, common...), files...)...)
			if !sameDenseSums(t, p2, r2) {
				t.Error("the pipeline's merged pass-2 statistics differ from streamfit stats over the same files")
			}
			run(t, append([]string{"fit", "gmm", "--from-stats", r2, "--no-timing", "--out", ref}, c.flags...)...)
			if want := readFile(t, ref); !bytes.Equal(got, want) {
				t.Errorf("the pipeline's model differs from streamfit fit gmm --from-stats:\n%s\n%s", got, want)
			}
			st, err := implicit.ReadDenseStats(p2)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(st.Header.Inputs); n != 4 {
				t.Errorf("the merged statistics list %d inputs, want the 4 files (row groups joined)", n)
			}
		})
	}
}

// sameDenseSums reports whether the dense statistics files a and b hold
// the same sums, bit for bit, whatever their provenance.
func sameDenseSums(t *testing.T, a, b string) bool {
	t.Helper()
	var enc [2][]byte
	for i, p := range []string{a, b} {
		st, err := implicit.ReadDenseStats(p)
		if err != nil {
			t.Fatal(err)
		}
		st.Header.Inputs, st.Header.Shards = nil, 0
		var buf bytes.Buffer
		if err := st.Encode(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		enc[i] = buf.Bytes()
	}
	return bytes.Equal(enc[0], enc[1])
}

// TestPipelineGMMRefusesTwice refuses a file given twice, under its name or
// a copy's, and statistics that cover a row group twice in the combiner;
// nothing is written.
func TestPipelineGMMRefusesTwice(t *testing.T) {
	dir := t.TempDir()
	files := gmmData(t, dir, synth.GMMConfig{D: 4, K: 2, Seed: 3}, 4, 200, 100)
	dup := filepath.Join(dir, "copy.parquet")
	if err := os.WriteFile(dup, readFile(t, files[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model.json")
	s := settingsOf(t, "gmm", "--k", "2", "--seed", "1")
	for _, in := range [][]string{append(files, files[0]), append(files, dup)} {
		err := pipeline(t, in, Options{Fit: s, Out: Output{Model: model}})
		if !errors.Is(err, statsfile.ErrOverlap) {
			t.Errorf("%v: got %v, want a refusal of the file given twice", in, err)
		}
	}
	units, err := PlanDense(context.Background(), files, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Units: append(units, units[1]), Read: stream.Options{BatchRows: readRows}, Fit: s, Out: Output{Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	defer removeLoopbackFiles(time.Now())
	if _, err = beam.Run(context.Background(), "prism", p); err == nil || !strings.Contains(err.Error(), "share an input") {
		t.Errorf("a row group given twice as a work unit: got %v, want the merge's refusal", err)
	}
	if _, err := os.Stat(model); !os.IsNotExist(err) {
		t.Errorf("a refused pipeline wrote %s", model)
	}
}
