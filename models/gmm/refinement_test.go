package gmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// refined runs the refinement of the fit of kind k with the flags args
// over src as a pipeline runs it, one step at a time (the moment passes,
// Start, then Pass and Step until the passes end), and returns its model
// and Fit's, both as JSON without timings.
func refined(t *testing.T, k models.Kind, src stream.DenseSource, c models.Common, args ...string) (got, want []byte) {
	t.Helper()
	ctx := context.Background()
	ds := k.Settings(models.FitFlags).(models.DenseSettings)
	fs := flag.NewFlagSet(k.Name(), flag.ContinueOnError)
	ds.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
		t.Fatal(err)
	}
	r := models.RefinementOf(ds, c)
	if r == nil {
		t.Fatalf("%v: no refinement", args)
	}
	st, err := implicit.RunPlan(ctx, src, r.Moments().Plan(""), 1)
	if err != nil {
		t.Fatal(err)
	}
	m, passes, err := models.Refine(ctx, r, st, src, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if passes > r.Cap() {
		t.Fatalf("%d passes beyond the cap of %d", passes, r.Cap())
	}
	f, err := ds.Fit(ctx, src, c)
	if err != nil {
		t.Fatal(err)
	}
	m.ClearTiming()
	f.ClearTiming()
	got, _ = json.Marshal(m)
	want, _ = json.Marshal(f)
	return got, want
}

// The refinement a pipeline runs a stage per pass of is Fit's EM: the same
// model, bit for bit, from the default settings and from a cap reached
// first; --em-passes 0 has none (the moment fit alone).
func TestRefinementIsFit(t *testing.T) {
	ds := gmm.Kind.Settings(models.FitFlags).(models.DenseSettings)
	fs := flag.NewFlagSet("gmm", flag.ContinueOnError)
	ds.Flags(fs)
	if err := fs.Parse([]string{"--em-passes", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
		t.Fatal(err)
	}
	if r := models.RefinementOf(ds, models.Common{K: 3}); r != nil {
		t.Errorf("--em-passes 0: a refinement of cap %d", r.Cap())
	}
	src, _ := memory(t, synth.GMMConfig{Rows: 24000, D: 5, K: 3, Sigma2: 4, Seed: 2, BatchRows: 500}, 500)
	for _, args := range [][]string{nil, {"--em-passes", "2", "--em-tol", "1e-12"}} {
		got, want := refined(t, gmm.Kind, src, models.Common{K: 3, Seed: 4, Workers: 2}, args...)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: the refinement's model differs from Fit's:\n%s\n%s", args, got, want)
		}
	}
	// k above the dimension: the moment passes fit d components, the start
	// places the others at sample rows with Fit's warning (the moments give
	// all d here, as Fit's first attempt does), and the model is Fit's.
	got, want := refined(t, gmm.Kind, src, models.Common{K: 8, Seed: 4, Workers: 2})
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("the moments give 5 of the 8 components")) {
		t.Errorf("k=8 > d=5: the refinement's model differs from Fit's or lacks the warning:\n%s\n%s", got, want)
	}
}
