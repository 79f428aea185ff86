package beamfit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPipelineEMMatchesFit runs the default fit, EM passes included, on
// prism over an LDA corpus split into four Parquet files of several row
// groups, and checks that model.json is byte-identical to that of
// `streamfit fit` (its default EM passes) on one file of the same
// documents, for LDA and the single-topic model, and that the passes ran
// and stopped by the rule before the cap (so the stages after it passed the
// model through).
func TestPipelineEMMatchesFit(t *testing.T) {
	dir := t.TempDir()
	fs := corpus(t, dir, synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 30, Seed: 9}, 250, parquetParts(750, 500, 1000, 750))
	all := filepath.Join(dir, "all.parquet")
	for _, model := range []string{"lda", "topic"} {
		t.Run(model, func(t *testing.T) {
			s, common := settings(5, 3, 0)
			if s.Single = model == "topic"; s.Single {
				common = append(common[:2:2], common[4:]...) // no --alpha0
			}
			s.EMPasses, s.EMTol, s.EMAlpha = 10, lda.DefaultEMTol, true
			out := filepath.Join(t.TempDir(), "model.json")
			if err := pipeline(t, fs, Options{Fit: s, Out: Output{Model: out, NoTiming: true}}); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(t.TempDir(), "fit.json")
			run(t, append([]string{"fit", model, "--input", all, "--no-timing", "--out", want}, common...)...)
			got := readFile(t, out)
			if !bytes.Equal(got, readFile(t, want)) {
				t.Fatalf("the pipeline's model.json differs from streamfit fit (EM) on the union: %.3g relative", modelDiff(t, out, want))
			}
			m, err := models.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			em := m.Fit.EM
			if em == nil || em.Passes < 2 || em.Passes >= s.EMPasses || !em.Converged {
				t.Fatalf("EM record %+v: want passes that the rule stopped before the cap of %d", em, s.EMPasses)
			}
			t.Logf("%s: %d bytes identical; %d EM passes, bounds %v", model, len(got), em.Passes, em.Bounds)
		})
	}
}

// TestPipelineEMCap checks a cap reached before the rule fires: two EM
// passes, the model of streamfit fit --em-passes 2.
func TestPipelineEMCap(t *testing.T) {
	dir := t.TempDir()
	fs := corpus(t, dir, synth.LDAConfig{Docs: 1200, Vocab: 200, K: 4, Alpha0: 1, DocLen: 30, Seed: 4}, 200, parquetParts(300, 300, 400, 200))
	s, common := settings(4, 5, 0)
	s.EMPasses, s.EMTol, s.EMAlpha = 2, 1e-9, false
	out := filepath.Join(t.TempDir(), "model.json")
	stats := filepath.Join(t.TempDir(), "p2.stats")
	if err := pipeline(t, fs, Options{Fit: s, Out: Output{Model: out, Stats: stats, NoTiming: true}}); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(t.TempDir(), "fit.json")
	run(t, append([]string{"fit", "lda", "--input", filepath.Join(dir, "all.parquet"), "--em-passes", "2", "--em-tol", "1e-9", "--em-alpha=false", "--no-timing", "--out", want}, common...)...)
	if !bytes.Equal(readFile(t, out), readFile(t, want)) {
		t.Fatalf("the pipeline's model.json differs from streamfit fit --em-passes 2: %.3g relative", modelDiff(t, out, want))
	}
	if _, err := os.Stat(stats); err != nil {
		t.Errorf("the phase-2 statistics were not written: %v", err)
	}
}
