package beamfit

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/report"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPipelineSweep runs a sweep over k (--k 2,3,5) on prism over an LDA
// corpus split into four Parquet files, and checks that every k's
// model.json is byte-identical to that of `streamfit stats --k 2,3,5` +
// `fit lda --from-stats S --k 2,3,5 --input DOCS --heldout TEST` over the
// same documents, and its scores file to that fit's --json (scores,
// recommendation, passes): with one and three goroutines per unit, and
// with the files cut into row groups of 200 documents (14 work units) and
// of 100 (28), read in the same batches. The models' EM passes stop at
// different passes, so the stages served fewer k as they went.
func TestPipelineSweep(t *testing.T) {
	cc := synth.LDAConfig{Docs: 2600, Vocab: 250, K: 5, Alpha0: 1, DocLen: 30, Seed: 9}
	parts := []part{{"train/part-0.parquet", 600}, {"train/part-1.parquet", 800}, {"train/part-2.parquet", 400}, {"train/part-3.parquet", 400}, {"held.parquet", 400}}
	var layouts [][]string
	for _, rows := range []int{200, 100} {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "train"), 0o755); err != nil {
			t.Fatal(err)
		}
		layouts = append(layouts, corpus(t, dir, cc, rows, parts))
	}
	files := layouts[0]
	train, held := files[:4], files[4]
	s, common := settings(5, 3, 0)
	common[1] = "2,3,5"
	s.Ks = []int{2, 3, 5}
	s.EMPasses, s.EMTol, s.EMAlpha = 10, lda.DefaultEMTol, true

	dir := t.TempDir()
	_, p2, _ := reference(t, dir, train, common, 0, false)
	ref := filepath.Join(dir, "ref-k{k}.json")
	cmd := exec.Command(cli(t), "fit", "lda", "--from-stats", p2, "--k", "2,3,5", "--input", filepath.Dir(train[0]), "--heldout", held,
		"--no-timing", "--json", "--out", ref, "--batch-rows", "100", "--workers", "2", "--progress", "off")
	cmd.Stderr = io.Discard
	refJSON, err := cmd.Output()
	if err != nil {
		t.Fatalf("streamfit fit --from-stats --k 2,3,5: %v", err)
	}
	want := sweepScores(t, refJSON)

	for i, w := range []int{1, 3} {
		s.Workers = w
		units := layouts[i]
		out := filepath.Join(t.TempDir(), "model-k{k}.json")
		scores := filepath.Join(t.TempDir(), "scores.json")
		if err := pipeline(t, units[:4], Options{Fit: s, Out: Output{Model: out, HeldOut: units[4], Scores: scores, NoTiming: true}}); err != nil {
			t.Fatal(err)
		}
		var passes []int
		for _, k := range s.Ks {
			got, path := lda.SweepOut(out, k), lda.SweepOut(ref, k)
			if !bytes.Equal(readFile(t, got), readFile(t, path)) {
				t.Fatalf("%d goroutines: k=%d: the pipeline's model differs from fit --from-stats --k: %.3g relative", w, k, modelDiff(t, got, path))
			}
			m, err := models.Read(got)
			if err != nil {
				t.Fatal(err)
			}
			if m.K != k || m.Fit.EM == nil || m.Fit.EM.Passes < 1 {
				t.Fatalf("k=%d: a model of %d topics, EM %+v", k, m.K, m.Fit.EM)
			}
			passes = append(passes, m.Fit.EM.Passes)
		}
		if g := sweepScores(t, readFile(t, scores)); g != want {
			t.Fatalf("%d goroutines: the scores differ from fit --from-stats --k --json:\n%s\nwant\n%s", w, g, want)
		}
		if passes[0] == passes[1] && passes[1] == passes[2] {
			t.Errorf("EM passes %v: want models stopping at different passes", passes)
		}
		t.Logf("%d goroutines per unit: EM passes per k %v; models and scores identical", w, passes)
	}
}

// sweepScores is what a pipeline's scores file and fit --json compare: the
// scores, the recommendation, the held-out source and the passes (not the
// file names or the wall time).
func sweepScores(t *testing.T, b []byte) string {
	t.Helper()
	var sf report.SweepFile
	if err := json.Unmarshal(b, &sf); err != nil {
		t.Fatalf("sweep JSON: %v\n%s", err, b)
	}
	if sf.Recommended == 0 || len(sf.Scores) == 0 || len(sf.Files) != len(sf.Scores) {
		t.Fatalf("sweep JSON without scores, a recommendation or its files: %s", b)
	}
	sf.Files, sf.Seconds = nil, 0
	c, err := json.MarshalIndent(sf, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(c)
}

// TestSweepRefused checks the settings a sweep refuses: a bad list of k
// (the flag's parse), a list for a dense model, Settings.Ks that are not
// ascending, distinct or ending at K, and held-out documents or a scores
// file without a sweep or without each other.
func TestSweepRefused(t *testing.T) {
	for _, bad := range []string{"10,10", "0,5", "5:3", "x"} {
		fs := flag.NewFlagSet("beam", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if _, _, err := Bind(fs, "lda"); err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse([]string{"--k", bad}); err == nil {
			t.Errorf("--k %s: accepted", bad)
		}
	}
	fs := flag.NewFlagSet("beam", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s, _, err := Bind(fs, "lda")
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--k", "20:40:10"}); err != nil || s.K != 40 || len(s.Ks) != 3 {
		t.Fatalf("--k 20:40:10: k=%d, ks=%v, %v", s.K, s.Ks, err)
	}
	fs = flag.NewFlagSet("beam", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, check, err := Bind(fs, "gmm")
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--k", "2,3"}); err != nil {
		t.Fatal(err)
	}
	if err := check(); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "topic models") {
		t.Errorf("--model gmm --k 2,3: %v, want ErrUsage", err)
	}

	units := []Unit{{Piece: -1}}
	topic := Settings{K: 5, Ks: []int{2, 5}, Alpha0: 1, EMPasses: 2, EMTol: 1e-3}
	model := Output{Model: "m.json"}
	for name, c := range map[string]struct {
		o    Options
		want string
	}{
		"ks not ending at k":   {Options{Fit: Settings{K: 6, Ks: []int{2, 5}, Alpha0: 1}, Out: model}, "largest"},
		"ks descending":        {Options{Fit: Settings{K: 5, Ks: []int{3, 2, 5}, Alpha0: 1}, Out: model}, "ascending"},
		"ks twice":             {Options{Fit: Settings{K: 5, Ks: []int{2, 5, 5}, Alpha0: 1}, Out: model}, "ascending"},
		"dense with ks":        {Options{Fit: Settings{Model: "gmm", K: 3, Ks: []int{2, 3}, Dense: []byte("{}")}, Out: model}, "topic models"},
		"held out for one k":   {Options{Fit: Settings{K: 5, Alpha0: 1}, Out: Output{Model: "m.json", HeldOut: "h", Scores: "s.json"}}, "for a sweep"},
		"held out, no scores":  {Options{Fit: topic, Out: Output{Model: "m.json", HeldOut: "h"}}, "both or neither"},
		"scores, no held out":  {Options{Fit: topic, Out: Output{Model: "m.json", Scores: "s.json"}}, "both or neither"},
		"held out, stats only": {Options{Fit: topic, StatsOnly: 2, Out: Output{Stats: "p2.stats", HeldOut: "h", Scores: "s.json"}}, "statistics only"},
	} {
		c.o.Units = units
		if _, err := New(c.o); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUsage about %q", name, err, c.want)
		}
	}
	o := Options{Units: units, Fit: topic, Out: Output{Model: "m.json", HeldOut: "h", Scores: "s.json"}}
	if _, err := New(o); err != nil {
		t.Errorf("a scored sweep: %v", err)
	}
}
