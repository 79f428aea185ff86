package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
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

// part is a file of a corpus: its name (the extension gives the format)
// and number of documents.
type part struct {
	name string
	docs int64
}

// parquetParts are n Parquet files part-I.parquet of the given numbers of
// documents.
func parquetParts(docs ...int64) []part {
	parts := make([]part, len(docs))
	for i, n := range docs {
		parts[i] = part{fmt.Sprintf("part-%d.parquet", i), n}
	}
	return parts
}

// corpus writes an LDA corpus as the files parts (Parquet row groups and
// Arrow record batches of rowGroup documents), and the whole corpus as one
// more file, all.parquet; it returns the parts' paths.
func corpus(t *testing.T, dir string, cfg synth.LDAConfig, rowGroup int, parts []part) []string {
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
			p := parts[len(files)]
			files = append(files, filepath.Join(dir, p.name))
			end += p.docs
			w = open(p.name)
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
// fit from the merged statistics (when fit). It returns the phase-1 and
// phase-2 statistics files and the model file.
func reference(t *testing.T, dir string, files []string, common []string, powerIters int, fit bool) (p1, p2, model string) {
	t.Helper()
	p1 = filepath.Join(dir, "ref1.stats")
	run(t, append(append([]string{"stats", "--phase", "1", "--out", p1}, common...), files...)...)
	st, err := implicit.ReadTopicStats(p1)
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
	// The later phases take their settings from the basis, but the batches
	// from the command line.
	batches := []string{"--batch-rows", fmt.Sprint(readRows)}
	if i := slices.Index(common, "--batch-entries"); i >= 0 {
		batches = append(batches, common[i:i+2]...)
	}
	basis := p1
	for i := range powers {
		next := filepath.Join(dir, fmt.Sprintf("ref-power%d.stats", i+1))
		run(t, append([]string{"stats", "--phase", "power", "--basis", basis, "--out", next}, append(batches, files...)...)...)
		basis = next
	}
	p2 = filepath.Join(dir, "ref2.stats")
	run(t, append([]string{"stats", "--phase", "2", "--basis", basis, "--power-iters", fmt.Sprint(powerIters), "--out", p2}, append(batches, files...)...)...)
	if !fit {
		return p1, p2, ""
	}
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
	o.Read.BatchRows, o.Read.Workers = readRows, 2
	return Run(context.Background(), "prism", files, o)
}

// sameSums reports whether the statistics in files a and b hold the same
// sums, bit for bit, whatever their provenance (inputs and shard counts).
func sameSums(t *testing.T, a, b string) bool {
	t.Helper()
	var enc [2][]byte
	for i, path := range []string{a, b} {
		st, err := implicit.ReadTopicStats(path)
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

// TestPipelineMatchesCLI runs the pipeline on prism over LDA corpora
// split into four Parquet files of several row groups (one work unit each),
// and checks that its model.json is byte-identical to the one the
// streamfit command fits from its statistics of the same files, and that
// its merged statistics hold the same sums. The vocabularies (400 and 600
// words) are whitened by the randomized sketch, so the power passes apply:
// none (the first sketch decays), one forced, and one the default fit takes
// on its own (k=5 with one extra column on a corpus of 12 topics, whose
// sketch does not decay past k; there the pipeline writes the merged
// phase-2 statistics only, which are compared). With --batch-entries 6000
// the row groups of 250 documents of about 38 entries are cut by entries,
// in batches of about 160 (more than readRows), alike in every route.
func TestPipelineMatchesCLI(t *testing.T) {
	type corpusCfg struct {
		lda      synth.LDAConfig
		rowGroup int
		parts    []part
	}
	a := corpusCfg{synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 40, Seed: 7}, 250, parquetParts(1000, 750, 1250, 1000)}
	b := corpusCfg{synth.LDAConfig{Docs: 1000, Vocab: 600, K: 12, Alpha0: 1, DocLen: 12, Beta: 0.1, Seed: 1}, 100, parquetParts(200, 300, 200, 300)}
	cases := []struct {
		name                   string
		corpus                 corpusCfg
		units                  int
		oversample, powerIters int
		wantPasses             int
		statsOnly              bool
		entries                int // --batch-entries (0: off, as --batch-rows alone)
	}{
		{"decaying sketch", a, 16, 0, 0, 1, false, 0},
		{"power-iters=1", a, 16, 0, 1, 2, false, 0},
		// Too few documents for the fit of k=5 to pass its checks (k is
		// larger than the data support): the statistics are compared.
		{"automatic power pass", b, 10, 1, 0, 2, true, 0},
		{"cut by entries", a, 16, 0, 0, 1, false, 6000},
	}
	root := t.TempDir()
	files := map[uint64][]string{} // by the corpus's seed
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, ok := files[c.corpus.lda.Seed]
			if !ok {
				dir := filepath.Join(root, fmt.Sprint(c.corpus.lda.Seed))
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				fs = corpus(t, dir, c.corpus.lda, c.corpus.rowGroup, c.corpus.parts)
				files[c.corpus.lda.Seed] = fs
			}
			units, err := Plan(context.Background(), fs, stream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != c.units {
				t.Fatalf("%d work units, want %d (row groups of %d documents)", len(units), c.units, c.corpus.rowGroup)
			}
			dir := t.TempDir()
			s, common := settings(5, 1, c.powerIters)
			s.Oversample = c.oversample
			common = append(common, "--oversample", fmt.Sprint(c.oversample))
			if c.entries > 0 {
				common = append(common, "--batch-entries", fmt.Sprint(c.entries))
			}
			_, ref2, refModel := reference(t, dir, fs, common, c.powerIters, !c.statsOnly)
			model, stats := filepath.Join(dir, "model.json"), filepath.Join(dir, "all2.stats")
			o := Options{Fit: s, Read: stream.Options{BatchEntries: c.entries}, Out: Output{Model: model, Stats: stats, NoTiming: true}}
			if c.statsOnly {
				o.StatsOnly, o.Out.Model = 2, ""
			}
			if err := pipeline(t, fs, o); err != nil {
				t.Fatal(err)
			}
			if !c.statsOnly {
				got, want := readFile(t, model), readFile(t, refModel)
				if !bytes.Equal(got, want) {
					t.Errorf("model.json of the pipeline (%d bytes) differs from streamfit fit --from-stats (%d bytes)", len(got), len(want))
				}
				t.Logf("%d bytes of model.json identical", len(got))
				// streamfit fit on the union keeps the same exact totals:
				// its spectral fit (the pipeline runs no EM passes) is the
				// same model.json.
				all := filepath.Join(filepath.Dir(fs[0]), "all.parquet")
				plain := filepath.Join(dir, "fit.json")
				run(t, append([]string{"fit", "lda", "--input", all, "--em-passes", "0", "--power-iters", fmt.Sprint(c.powerIters), "--no-timing", "--out", plain}, common...)...)
				if !bytes.Equal(got, readFile(t, plain)) {
					t.Errorf("the pipeline's model.json differs from streamfit fit --em-passes 0 on the union: %.3g relative", modelDiff(t, model, plain))
				}
			} else if _, err := os.Stat(model); err == nil {
				t.Errorf("statistics only, but a model was written")
			}
			if !sameSums(t, stats, ref2) {
				t.Errorf("merged phase-2 statistics differ from streamfit stats --phase 2 over the same files")
			}
			st, err := implicit.ReadTopicStats(stats)
			if err != nil {
				t.Fatal(err)
			}
			if st.Header.Shards != len(units) || len(st.Header.Inputs) != len(fs) {
				t.Errorf("merged statistics of %d shards over %d inputs, want %d work units over %d files", st.Header.Shards, len(st.Header.Inputs), len(units), len(fs))
			}
			if st.Passes != c.wantPasses {
				t.Errorf("the whitening took %d passes, want %d", st.Passes, c.wantPasses)
			}
			t.Logf("whitening passes %d", st.Passes)
		})
	}
}

// modelDiff returns the largest difference between the models in files a
// and b: of the topics' entries relative to the largest entry, or of α
// relative to each entry.
func modelDiff(t *testing.T, a, b string) float64 {
	t.Helper()
	var m [2]*models.Model
	for i, path := range []string{a, b} {
		var err error
		if m[i], err = models.Read(path); err != nil {
			t.Fatal(err)
		}
	}
	if m[0].K != m[1].K || m[0].D != m[1].D || m[0].Fit.Docs != m[1].Fit.Docs {
		t.Fatalf("models of %d×%d from %d documents and %d×%d from %d", m[0].K, m[0].D, m[0].Fit.Docs, m[1].K, m[1].D, m[1].Fit.Docs)
	}
	var diff, scale, alpha float64
	for i := range m[0].K {
		for j, v := range m[0].Topics[i] {
			diff = max(diff, math.Abs(v-m[1].Topics[i][j]))
			scale = max(scale, math.Abs(m[1].Topics[i][j]))
		}
		alpha = max(alpha, math.Abs(m[0].Alpha[i]-m[1].Alpha[i])/math.Abs(m[1].Alpha[i]))
	}
	return max(alpha, diff/scale)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
