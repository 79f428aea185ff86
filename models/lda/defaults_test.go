package lda

import (
	"context"
	"flag"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestDefaultConfigIsTheCommandLines: the settings `fit lda` binds to its
// flags, none given, fit the same model, byte for byte, as DefaultConfig —
// the Go API's default is the command line's.
func TestDefaultConfigIsTheCommandLines(t *testing.T) {
	ctx := context.Background()
	const k = 4
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 300, K: k, Alpha0: 1, DocLen: 60, Seed: 3})
	s := Kind.Settings(models.FitFlags).(*Settings)
	fs := flag.NewFlagSet("fit lda", flag.ContinueOnError)
	s.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(models.Check{Given: models.Given(fs)}); err != nil {
		t.Fatal(err)
	}
	cli := s.Config
	cli.K, cli.Seed = k, 1 // models.Common's flags: --k, --seed 1
	a, err := Fit(ctx, src, cli)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(ctx, src, DefaultConfig(k))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fit.EM == nil || b.Fit.EM == nil || a.Fit.EM.Passes == 0 {
		t.Fatalf("the default fit ran no EM pass: %+v, %+v", a.Fit.EM, b.Fit.EM)
	}
	if !sameModel(a, b) || a.Fit.EM.Passes != b.Fit.EM.Passes {
		t.Errorf("the command line's defaults (%d EM passes) and DefaultConfig (%d) fit different models", a.Fit.EM.Passes, b.Fit.EM.Passes)
	}
}
