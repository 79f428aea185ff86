package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestMain runs the pipelines of the tests on Beam's prism runner, in this
// process (loopback workers: no Docker, no Java).
func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// readRows is the batch size the tests read with, smaller than the row
// groups, so a row group is read in several batches.
const readRows = 100

// corpus writes an LDA corpus of docs documents as Parquet files of the
// given numbers of documents (row groups of rowGroup documents), and the
// whole corpus as one more file, all.parquet; it returns the part files.
func corpus(t *testing.T, dir string, cfg synth.LDAConfig, rowGroup int, sizes ...int64) []string {
	t.Helper()
	cfg.BatchRows = 50
	c, err := synth.NewLDA(cfg)
	if err != nil {
		t.Fatal(err)
	}
	open := func(name string) stream.DocWriter {
		w, err := stream.Create(filepath.Join(dir, name), stream.WriteOptions{Terms: cfg.Vocab, RowGroupRows: rowGroup})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	all := open("all.parquet")
	var files []string
	var w stream.DocWriter
	var end int64
	for b, err := range c.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Start >= end {
			if w != nil {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			name := fmt.Sprintf("part-%d.parquet", len(files))
			files = append(files, filepath.Join(dir, name))
			end += sizes[len(files)-1]
			w = open(name)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := all.Write(b); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	for _, w := range []stream.DocWriter{w, all} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds the streamfit command of the core module (this module's
// replace directive) once, for the reference results.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "streamfit-beam-cli")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "streamfit")
		out, err := exec.Command("go", "build", "-o", cliPath, "github.com/streamfit/streamfit/cmd/streamfit").CombinedOutput()
		if err != nil {
			cliErr = fmt.Errorf("go build streamfit: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// run runs the streamfit command and fails the test when it fails.
func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(cli(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("streamfit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// reference runs the statistics route of the streamfit command over the
// files, all of them one shard: phase 1, the power passes (as many as
// powerIters says, or as PowerAdvice says for the default), phase 2 and the
// fit from the merged statistics. It returns the phase-1 and phase-2
// statistics files and the model file.
func reference(t *testing.T, dir string, files []string, common []string, powerIters int) (p1, p2, model string) {
	t.Helper()
	p1 = filepath.Join(dir, "ref1.stats")
	run(t, append(append([]string{"stats", "--phase", "1", "--out", p1}, common...), files...)...)
	st, err := implicit.ReadStats(p1)
	if err != nil {
		t.Fatal(err)
	}
	powers := max(powerIters, 0)
	if powerIters == 0 && !st.Header.Exact {
		if _, due, err := lda.PowerAdvice(context.Background(), st, lda.Config{}); err != nil {
			t.Fatal(err)
		} else if due {
			powers = 1
		}
	}
	basis := p1
	for i := range powers {
		next := filepath.Join(dir, fmt.Sprintf("ref-power%d.stats", i+1))
		run(t, append(append([]string{"stats", "--phase", "power", "--basis", basis, "--out", next, "--batch-rows", fmt.Sprint(readRows)}, files...))...)
		basis = next
	}
	p2 = filepath.Join(dir, "ref2.stats")
	run(t, append(append([]string{"stats", "--phase", "2", "--basis", basis, "--power-iters", fmt.Sprint(powerIters), "--out", p2, "--batch-rows", fmt.Sprint(readRows)}, files...))...)
	model = filepath.Join(dir, "ref.json")
	run(t, "fit", "lda", "--from-stats", p2, "--no-timing", "--out", model)
	return p1, p2, model
}

// settings are the fit's settings of the tests; common the same as flags of
// `streamfit stats`.
func settings(k int, seed uint64, powerIters int) (Settings, []string) {
	s := Settings{K: k, Alpha0: 1, Seed: seed, PowerIters: powerIters, Workers: 2}
	return s, []string{"--k", fmt.Sprint(k), "--alpha0", "1", "--seed", fmt.Sprint(seed), "--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--progress", "off"}
}

// pipeline runs the pipeline over files on prism.
func pipeline(t *testing.T, files []string, o Options) error {
	t.Helper()
	o.Read = stream.Options{BatchRows: readRows, Workers: 2}
	return Run(context.Background(), "prism", files, o)
}

// sameSums reports whether the statistics in files a and b hold the same
// sums, bit for bit, whatever their provenance (inputs and shard counts).
func sameSums(t *testing.T, a, b string) bool {
	t.Helper()
	var enc [2][]byte
	for i, path := range []string{a, b} {
		st, err := implicit.ReadStats(path)
		if err != nil {
			t.Fatal(err)
		}
		st.Header.Inputs, st.Header.Shards = nil, 1
		if enc[i], err = encode(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	return bytes.Equal(enc[0], enc[1])
}

// TestPipelineMatchesCLI runs the pipeline on prism over an LDA corpus
// split into four Parquet files of several row groups (one work unit
// each), and checks that its model.json is byte-identical to the one the
// streamfit command fits from its statistics of the same files, and its
// merged statistics hold the same sums. The vocabulary (400 words) is
// whitened by the randomized sketch, so the power passes apply: the
// default (taken when the data ask for it) and one power pass forced.
func TestPipelineMatchesCLI(t *testing.T) {
	dir := t.TempDir()
	files := corpus(t, dir, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 40, Seed: 7}, 250, 1000, 750, 1250, 1000)
	units, err := Plan(context.Background(), files, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 16 {
		t.Fatalf("%d work units, want 16 (row groups of 250 documents)", len(units))
	}
	for _, powerIters := range []int{0, 1} {
		t.Run(fmt.Sprintf("power-iters=%d", powerIters), func(t *testing.T) {
			dir := t.TempDir()
			s, common := settings(5, 3, powerIters)
			_, ref2, refModel := reference(t, dir, files, common, powerIters)
			model, stats := filepath.Join(dir, "model.json"), filepath.Join(dir, "all2.stats")
			if err := pipeline(t, files, Options{Fit: s, Out: Output{Model: model, Stats: stats, NoTiming: true}}); err != nil {
				t.Fatal(err)
			}
			got, want := readFile(t, model), readFile(t, refModel)
			if !bytes.Equal(got, want) {
				t.Errorf("model.json of the pipeline (%d bytes) differs from streamfit fit --from-stats (%d bytes)", len(got), len(want))
			}
			if !sameSums(t, stats, ref2) {
				t.Errorf("merged phase-2 statistics differ from streamfit stats --phase 2 over the same files")
			}
			st, err := implicit.ReadStats(stats)
			if err != nil {
				t.Fatal(err)
			}
			if st.Header.Shards != len(units) || len(st.Header.Inputs) != len(files) {
				t.Errorf("merged statistics of %d shards over %d inputs, want %d work units over %d files", st.Header.Shards, len(st.Header.Inputs), len(units), len(files))
			}
			t.Logf("whitening passes %d, %d bytes of model.json", st.Passes, len(got))
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
