package hmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// The Baum–Welch passes a pipeline runs a stage per pass of
// (models.Refinement: the moment passes, Start, then Pass and Step until
// the passes end) give Fit's model bit for bit, at k within the symbols
// and at k above them, where the start adds the states the moments do not
// give as Fit does, with its one warning.
func TestRefinementIsFit(t *testing.T) {
	ctx := context.Background()
	src, _ := generated(t, synth.HMMSeqConfig{Seqs: 300, Len: 20, K: 3, D: 6, Discrete: true, Seed: 3}, 97)
	for _, k := range []int{3, 8} {
		ds := hmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
		fs := flag.NewFlagSet("hmm", flag.ContinueOnError)
		ds.Flags(fs)
		if err := fs.Parse([]string{"--discrete", "--windows"}); err != nil {
			t.Fatal(err)
		}
		if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
			t.Fatal(err)
		}
		c := models.Common{K: k, Seed: 1}
		r := models.RefinementOf(ds, c)
		if r == nil {
			t.Fatal("--discrete: no refinement")
		}
		m, _ := refineAsPipeline(t, r, src)
		f, err := ds.Fit(ctx, src, c)
		if err != nil {
			t.Fatal(err)
		}
		m.ClearTiming()
		f.ClearTiming()
		got, _ := json.Marshal(m)
		want, _ := json.Marshal(f)
		if !bytes.Equal(got, want) {
			t.Errorf("k=%d: the refinement's model differs from Fit's:\n%s\n%s", k, got, want)
		}
		if n := bytes.Count(got, []byte("the moments give")); n != min(k-3, 1) || (k > 3 && !bytes.Contains(got, []byte("Baum–Welch starts the other 4"))) {
			t.Errorf("k=%d: %d warnings that the moments give fewer states, want %d saying how Baum–Welch starts the others:\n%s", k, n, min(k-3, 1), got)
		}
	}
}

// refineAsPipeline runs r as a pipeline does, a stage per pass over src
// (the moment passes, Start, then every pass until Pass says no more), and
// returns its model and the passes after Start.
func refineAsPipeline(t *testing.T, r models.Refinement, src *stream.MemoryDense) (models.Fitted, int) {
	t.Helper()
	ctx := context.Background()
	st, err := implicit.RunPlan(ctx, src, r.Moments().Plan(""), 1)
	if err != nil {
		t.Fatal(err)
	}
	m, passes, err := models.Refine(ctx, r, st, src, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	return m, passes
}
