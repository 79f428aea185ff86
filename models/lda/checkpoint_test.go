package lda

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestCheckpointResume stops a fit in its second pass (by cancelling it
// from the progress hook after a checkpoint), resumes it from the
// checkpoints and compares the model with an uninterrupted fit, bit for bit.
// Checkpoints of other settings are refused.
func TestCheckpointResume(t *testing.T) {
	c, err := synth.NewLDA(synth.LDAConfig{Docs: 3000, Vocab: 200, K: 4, Alpha0: 1, DocLen: 40, Seed: 17, BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{K: 4, Alpha0: 1, Seed: 5, Workers: 2, Third: Explicit}
	ref, err := Fit(context.Background(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ck := Checkpoint{Dir: dir, Key: "corpus 17", Every: -1}
	for _, stop := range []struct {
		pass int
		docs int64
	}{{1, 1500}, {2, 1200}, {2, 1000}} { // docs counted from where the pass resumed
		ctx, cancel := context.WithCancel(context.Background())
		cfg := cfg
		cfg.Checkpoint = ck
		cfg.Progress = func(p Progress) {
			if p.Pass == stop.pass && p.Docs >= stop.docs {
				cancel()
			}
		}
		if _, err := Fit(ctx, c, cfg); !errors.Is(err, context.Canceled) {
			t.Fatalf("fit stopped in pass %d: %v", stop.pass, err)
		}
		cancel()
		partial, _ := filepath.Glob(filepath.Join(dir, "pass-*.stats"))
		t.Logf("stopped in pass %d after %d documents: %d checkpoint files", stop.pass, stop.docs, len(partial))
	}
	if _, err := os.Stat(filepath.Join(dir, "pass-2.partial.stats")); err != nil {
		t.Fatalf("no checkpoint within pass 2: %v", err)
	}
	cfg.Checkpoint = ck
	var seen []int64
	cfg.Progress = func(p Progress) {
		if p.Pass == 2 && !p.Done {
			seen = append(seen, p.Docs)
		}
	}
	got, err := Fit(context.Background(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || len(seen) >= 30 {
		t.Errorf("the resumed fit read %d batches in pass 2, want fewer than all 30", len(seen))
	}
	same := func(a, b *models.Model) bool {
		fa, fb := a.Fit, b.Fit
		// The plan records the machine (free disk space, which the
		// checkpoints themselves change), not a result of the passes.
		fa.Seconds, fb.Seconds = 0, 0
		fa.Plan, fb.Plan = nil, nil
		return reflect.DeepEqual(a.Topics, b.Topics) && reflect.DeepEqual(a.Alpha, b.Alpha) && reflect.DeepEqual(fa, fb)
	}
	if !same(got, ref) {
		t.Error("resumed fit differs from an uninterrupted one")
	}
	// A finished checkpoint is reused without reading the data.
	seen = nil
	if again, err := Fit(context.Background(), c, cfg); err != nil || !same(again, ref) || len(seen) != 0 {
		t.Errorf("fit from finished checkpoints: %v, %d batches read", err, len(seen))
	}
	// Other settings, or a damaged checkpoint, are refused.
	cfg.Alpha0 = 2
	if _, err := Fit(context.Background(), c, cfg); err == nil || !strings.Contains(err.Error(), "another fit") {
		t.Errorf("checkpoint of α₀=1 used for α₀=2: %v", err)
	}
	cfg.Alpha0 = 1
	p2 := filepath.Join(dir, "pass-2.stats")
	data, _ := os.ReadFile(p2)
	os.WriteFile(p2, data[:len(data)-7], 0o644)
	if _, err := Fit(context.Background(), c, cfg); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated checkpoint: %v", err)
	}
}
