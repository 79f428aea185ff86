package beamfit

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPipelineDenseModels runs the fits of ICA, the three-view mixture,
// the HMM of sequences and the Markov chain and HMM of snapshot sets on
// prism over four Parquet files of three row groups each, and checks that
// model.json is byte-identical to `streamfit fit MODEL` over the union of
// the files in one file. ICA and multiview take a row group per work unit;
// the grouped models (sequences, snapshot sets) a file per unit.
func TestPipelineDenseModels(t *testing.T) {
	const rows = 600
	type gen = func(context.Context) iter.Seq2[*stream.Dense, error]
	must := func(g interface {
		Rows(context.Context) iter.Seq2[*stream.Dense, error]
	}, err error) gen {
		if err != nil {
			t.Fatal(err)
		}
		return g.Rows
	}
	for _, c := range []struct {
		model string
		gen   func() gen
		s     Settings
		group bool
		flags []string
		rows  int64 // per file (0: rows)
	}{
		{"ica", func() gen {
			return must(synth.NewICA(synth.ICAConfig{Rows: 4 * rows, D: 5, K: 3, Seed: 3, BatchRows: 50}))
		},
			Settings{K: 3, Seed: 5}, false, []string{"--k", "3", "--seed", "5"}, 0},
		{"multiview", func() gen {
			return must(synth.NewMultiView(synth.MultiViewConfig{Rows: 4 * rows, Dims: [3]int{3, 3, 4}, K: 2, Seed: 3, BatchRows: 50}))
		}, Settings{K: 2, Seed: 5}, false, []string{"--k", "2", "--seed", "5"}, 0},
		{"hmm", func() gen {
			return must(synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 4 * rows / 5, Len: 5, K: 2, D: 4, Seed: 3, BatchRows: 50}))
		}, Settings{K: 2, Seed: 5}, true, []string{"--k", "2", "--seed", "5"}, 0},
		{"markov", func() gen {
			return must(synth.NewSnapshots(synth.SnapshotConfig{Sets: 4 * rows / 3, PerSet: 3, K: 3, Seed: 3, BatchRows: 60}))
		}, Settings{K: 3, Seed: 5, Alpha0: 1, R: 0.3}, true, []string{"--k", "3", "--seed", "5", "--alpha0", "1", "--r", "0.3"}, 0},
		{"hmm-snapshot", func() gen {
			return must(synth.NewSnapshots(synth.SnapshotConfig{Sets: 4 * 5 * rows / 3, PerSet: 3, K: 3, M: 5, Seed: 3, BatchRows: 60}))
		}, Settings{K: 3, Seed: 5, Alpha0: 1, R: 0.3}, true, []string{"--k", "3", "--seed", "5", "--alpha0", "1", "--r", "0.3"}, 5 * rows},
	} {
		t.Run(c.model, func(t *testing.T) {
			dir := t.TempDir()
			n := cmp.Or(c.rows, rows)
			files := denseFiles(t, dir, c.gen(), n, int(n/3))
			s := c.s
			s.Model, s.Workers = c.model, 2
			read := stream.Options{}
			flags := append([]string{"--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--progress", "off"}, c.flags...)
			if c.group {
				read.GroupColumn = "group"
				flags = append(flags, "--group-column", "group")
			}
			model := filepath.Join(dir, "model.json")
			o := Options{Fit: s, Out: Output{Model: model, NoTiming: true}}
			o.Read = stream.Options{BatchRows: readRows, Workers: 2, GroupColumn: read.GroupColumn}
			if err := Run(context.Background(), "prism", files, o); err != nil {
				t.Fatal(err)
			}
			whole := filepath.Join(dir, "whole.json")
			run(t, append([]string{"fit", c.model, "--no-timing", "--input", filepath.Join(dir, "all.parquet"), "--out", whole}, flags...)...)
			got, want := readFile(t, model), readFile(t, whole)
			if !bytes.Equal(got, want) {
				t.Fatalf("the pipeline's model differs from streamfit fit %s over the union:\n%s\n%s", c.model, got, want)
			}
			planner := PlanDense
			if c.group {
				planner = PlanFiles
			}
			units, err := planner(context.Background(), files, read)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d work units, %d bytes of model.json identical", c.model, len(units), len(got))
		})
	}
}
