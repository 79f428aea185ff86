package lda

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestSweepStages runs a sweep as stages apart: the statistics of
// SweepConfig over two shards, the spectral fits of FitKStats with no
// documents, then EM passes whose statistics are computed over three other
// shards (one read each for every model still refining), encoded, decoded
// and merged in reverse order, each followed by SweepEMStep; and checks
// that SweepFromStages gives the models and scores of FitKStats over the
// documents bit for bit, with the models stopping at different passes.
func TestSweepStages(t *testing.T) {
	ctx := context.Background()
	cc := synth.LDAConfig{Docs: 2560, Vocab: 200, K: 6, Alpha0: 1, DocLen: 60, Seed: 5}
	_, all, held, _ := shards(t, cc, 2048.0/2560)
	ks := []int{2, 4, 6}
	cfg := DefaultConfig(0)
	cfg.EM.Passes, cfg.Workers = 6, 2
	sc, err := SweepConfig(cfg, []int{6, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	_, st := powerRoute(t, sc, 0, part(all, 0, 1024), part(all, 1024, 2048))
	opt := SweepOptions{HeldOut: held}
	direct, err := FitKStats(ctx, st, all, ks, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	start, err := FitKStats(ctx, st, nil, ks, cfg, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	ms := start.Models
	units := []*stream.MemoryDocs{part(all, 0, 512), part(all, 512, 1536), part(all, 1536, 2048)}
	stages := 0
	for ; !SweepEMDone(ms, cfg); stages++ {
		var merged *SweepEMStats
		for _, u := range slices.Backward(units) {
			one, err := SweepEMPassStats(ctx, u, ms, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := one.Encode(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			if one, err = DecodeSweepEMStats(buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			if merged == nil {
				merged = one
			} else if err := merged.Merge(one); err != nil {
				t.Fatal(err)
			}
		}
		if err := SweepEMStep(ms, merged, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := SweepEMPassStats(ctx, all, ms, cfg); !errors.Is(err, ErrEMDone) {
		t.Errorf("a pass after every model ended: %v, want ErrEMDone", err)
	}
	sw, err := SweepFromStages(ctx, ms, all, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sweepJSON(t, sw), sweepJSON(t, direct)) || sw.Passes != direct.Passes || sw.Recommended != direct.Recommended {
		t.Fatalf("the sweep from stages differs from FitKStats over the documents (passes %d and %d)", sw.Passes, direct.Passes)
	}
	var passes []int
	for _, s := range sw.Scores {
		passes = append(passes, s.EMPasses)
	}
	if slices.Min(passes) == slices.Max(passes) || slices.Max(passes) != stages {
		t.Errorf("EM passes %v in %d stages: want models that stop at different passes, the last at the last stage", passes, stages)
	}
	t.Logf("EM passes per k %v, recommended k=%d", passes, sw.Recommended)
}

// TestSweepStagesRefuse: statistics of another pass or of fewer models,
// a model's statistics missing from one shard, and bytes of another kind
// are refused.
func TestSweepStagesRefuse(t *testing.T) {
	ctx := context.Background()
	cc := synth.LDAConfig{Docs: 600, Vocab: 60, K: 3, Alpha0: 1, DocLen: 30, Seed: 2}
	_, all, _, _ := shards(t, cc, 1)
	cfg := DefaultConfig(0)
	cfg.EM.Passes = 3
	sc, err := SweepConfig(cfg, []int{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	_, st := powerRoute(t, sc, 0, all)
	start, err := FitKStats(ctx, st, nil, []int{2, 3}, cfg, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	ms := start.Models
	first, err := SweepEMPassStats(ctx, all, ms, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := SweepEMStep(ms[:1], first, cfg); err == nil {
		t.Error("statistics of two models for a sweep of one: accepted")
	}
	if err := SweepEMStep(ms, first, cfg); err != nil {
		t.Fatal(err)
	}
	if err := SweepEMStep(ms, first, cfg); err == nil || !strings.Contains(err.Error(), "another model or pass") {
		t.Errorf("the first pass's statistics for the second pass: %v", err)
	}
	second, err := SweepEMPassStats(ctx, all, ms, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Merge(&SweepEMStats{Stats: []*EMStats{second.Stats[0], nil}}); err == nil {
		t.Error("a shard without the statistics of a model still refining: merged")
	}
	if err := second.Merge(&SweepEMStats{Stats: second.Stats[:1]}); err == nil {
		t.Error("statistics of one model merged into those of two")
	}
	if _, err := SweepFromStages(ctx, ms, nil, cfg, SweepOptions{NoScore: true}); err == nil {
		t.Error("a sweep whose passes have not ended: assembled")
	}
	if _, err := SweepFromStages(ctx, []*models.Model{ms[1], ms[0]}, nil, DefaultConfig(0), SweepOptions{NoScore: true}); err == nil {
		t.Error("models in descending k: assembled")
	}
	var buf bytes.Buffer
	if err := first.Stats[0].Encode(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeSweepEMStats(buf.Bytes()); !errors.Is(err, statsfile.ErrModel) {
		t.Errorf("one model's EM statistics decoded as a sweep's: %v, want statsfile.ErrModel", err)
	}
	buf.Reset()
	if err := second.Encode(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeSweepEMStats(buf.Bytes()[:buf.Len()-5]); err == nil {
		t.Error("cut statistics decoded")
	}
}

// TestParseKs checks the lists and ranges of k, the refusals, SweepOut's
// names and SweepConfig's k.
func TestParseKs(t *testing.T) {
	for s, want := range map[string][]int{"10": {10}, "20,10, 50": {10, 20, 50}, "10:40:10": {10, 20, 30, 40}, "3:5": {3, 4, 5}} {
		if got, err := ParseKs(s); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
		if back, err := ParseKs(FormatKs(want)); err != nil || !slices.Equal(back, want) {
			t.Errorf("FormatKs(%v) = %q, read back as %v, %v", want, FormatKs(want), back, err)
		}
	}
	for _, s := range []string{"", "0", "10,x", "10,10", "5:3", "1:10:0", "a:b", "-2"} {
		if ks, err := ParseKs(s); err == nil {
			t.Errorf("%q: %v accepted", s, ks)
		}
	}
	for out, want := range map[string]string{"model-k{k}.json": "model-k20.json", "m.json": "m-k20.json", "dir/{k}/m": "dir/20/m"} {
		if got := SweepOut(out, 20); got != want {
			t.Errorf("SweepOut(%q, 20) = %q, want %q", out, got, want)
		}
	}
	if c, err := SweepConfig(DefaultConfig(3), []int{7, 5}); err != nil || c.K != 7 {
		t.Errorf("SweepConfig of 5,7: k=%d, %v", c.K, err)
	}
	if _, err := SweepConfig(DefaultConfig(3), []int{5, 5}); err == nil {
		t.Error("SweepConfig of 5,5: accepted")
	}
}
