package lda

import (
	"context"
	"errors"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// powerCorpus is a corpus whose first sketch does not decay (tail 0.96 with
// one extra column at k=5 over 5000 words), so the default Fit takes a power
// pass: shards a and b are cut at a batch boundary (3 of its 512-document
// batches).
func powerCorpus(t *testing.T) (all, a, b *stream.MemoryDocs, cfg Config) {
	t.Helper()
	all, a, b, _ = shards(t, synth.LDAConfig{Docs: 4000, Vocab: 5000, K: 10, Alpha0: 1, DocLen: 20, Seed: 5}, 1536.0/4000)
	return all, a, b, Config{K: 5, Alpha0: 1, Seed: 2, Workers: 2, Oversample: 1}
}

// mergeAll runs phase over every source and merges the results in order.
func mergeAll(t *testing.T, phase func(stream.DocSource) (*implicit.TopicStats, error), srcs ...stream.DocSource) *implicit.TopicStats {
	t.Helper()
	var total *implicit.TopicStats
	for _, s := range srcs {
		st, err := phase(s)
		if err != nil {
			t.Fatal(err)
		}
		if total == nil {
			total = st
		} else if err := total.Merge(st); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// powerRoute runs phase 1, powers power passes and phase 2 over the sources
// (each phase merged in the order given) and fits the model.
func powerRoute(t *testing.T, cfg Config, powers int, srcs ...stream.DocSource) (*implicit.TopicStats, *implicit.TopicStats) {
	t.Helper()
	ctx := context.Background()
	basis := mergeAll(t, func(s stream.DocSource) (*implicit.TopicStats, error) { return Phase1Stats(ctx, s, cfg) }, srcs...)
	for range powers {
		prev := basis
		basis = mergeAll(t, func(s stream.DocSource) (*implicit.TopicStats, error) { return PowerStats(ctx, s, prev, cfg) }, srcs...)
	}
	return basis, mergeAll(t, func(s stream.DocSource) (*implicit.TopicStats, error) { return Phase2Stats(ctx, s, basis, cfg) }, srcs...)
}

// TestPowerStats is the acceptance test of power passes in the statistics
// route: where the default Fit takes its automatic power pass, phase 2 of
// the phase-1 statistics is refused, and the route with a power phase gives
// the model of Fit bit for bit (both keep exact totals) and, merged in any
// order from shards cut at batch boundaries, the model of the union's
// statistics bit for bit.
func TestPowerStats(t *testing.T) {
	ctx := context.Background()
	all, a, b, cfg := powerCorpus(t)
	p1 := mergeAll(t, func(s stream.DocSource) (*implicit.TopicStats, error) { return Phase1Stats(ctx, s, cfg) }, a, b)
	tail, power, err := PowerAdvice(ctx, p1, cfg)
	if err != nil || !power || !(tail > autoPowerTail) {
		t.Fatalf("phase-1 advice: tail %.3f, power pass %t, %v; want a power pass", tail, power, err)
	}
	if _, err := Phase2Stats(ctx, a, p1, cfg); !errors.Is(err, ErrPowerPass) {
		t.Errorf("phase 2 of a non-decaying phase-1 basis without a power pass: %v", err)
	}
	no := cfg
	no.PowerIters = -1
	if _, err := Phase2Stats(ctx, a, p1, no); err != nil {
		t.Errorf("phase 2 with power-iters -1: %v", err)
	}

	fit, err := Fit(ctx, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Fit.Passes != 3 {
		t.Fatalf("Fit took %d passes, want 3 (the automatic power pass)", fit.Fit.Passes)
	}
	pwUnion, p2Union := powerRoute(t, cfg, 1, all)
	if _, power, err := PowerAdvice(ctx, pwUnion, cfg); err != nil || power {
		t.Errorf("advice after the power pass: power %t, %v", power, err)
	}
	union := fitStats(t, p2Union, cfg)
	if union.Fit.Passes != 3 || union.Fit.Docs != fit.Fit.Docs {
		t.Errorf("statistics fit: %d passes, %d documents; Fit %d, %d", union.Fit.Passes, union.Fit.Docs, fit.Fit.Passes, fit.Fit.Docs)
	}
	if d := relDiff(t, union, fit); d != 0 {
		t.Errorf("power route of one shard differs from Fit by %.3g relative", d)
	}
	for name, srcs := range map[string][]stream.DocSource{"(A,B)": {a, b}, "(B,A)": {b, a}} {
		pw, p2 := powerRoute(t, cfg, 1, srcs...)
		if pw.Header.Power != 1 || pw.Header.Shards != 2 || pw.Pair.Docs != pwUnion.Pair.Docs {
			t.Errorf("%s: power statistics of pass %d, %d shards, %d documents", name, pw.Header.Power, pw.Header.Shards, pw.Pair.Docs)
		}
		if d := relDiff(t, fitStats(t, p2, cfg), union); d != 0 {
			t.Errorf("%s: merged power route differs from the union's by %.3g", name, d)
		}
	}

	// Merges across passes or bases are refused: power statistics of
	// another Q (from the phase 1 of shard A alone) and phase-1 ones.
	pwA, err := PowerStats(ctx, a, p1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p1a, err := Phase1Stats(ctx, a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pwOther, err := PowerStats(ctx, b, p1a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pwA.Merge(pwOther); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("merge of power statistics of different bases: %v", err)
	}
	if err := pwA.Merge(p1a); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("merge of power with phase-1 statistics: %v", err)
	}

	// --append: power statistics of new data against the stored Q merge
	// into those of the same pass bit for bit.
	pwB, err := PowerStatsLike(ctx, b, pwA, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pwA.Merge(pwB); err != nil {
		t.Fatal(err)
	}
	p2a := mergeAll(t, func(s stream.DocSource) (*implicit.TopicStats, error) { return Phase2Stats(ctx, s, pwA, cfg) }, a, b)
	if d := relDiff(t, fitStats(t, p2a, cfg), union); d != 0 {
		t.Errorf("appended power statistics give a model %.3g away from the union's", d)
	}
	if _, err := PowerStatsLike(ctx, b, p1, cfg); err == nil {
		t.Error("PowerStatsLike of phase-1 statistics accepted")
	}
	if _, err := BasisDrift(ctx, p1, p2Union, cfg); err == nil {
		t.Error("drift of a power route's phase 2 against phase-1 statistics accepted")
	}
	if angle, err := BasisDrift(ctx, pwA, p2Union, cfg); err != nil || angle > 1e-6 {
		t.Errorf("drift of the power route against its own power statistics: %g, %v", angle, err)
	}
}

// TestPowerStatsChain checks two power phases against Fit with PowerIters
// 2, and that phase 2 refuses a basis with another number of power passes
// than cfg.PowerIters asks for.
func TestPowerStatsChain(t *testing.T) {
	ctx := context.Background()
	all, _, _, cfg := powerCorpus(t)
	cfg.PowerIters = 2
	fit, err := Fit(ctx, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pw, p2 := powerRoute(t, cfg, 2, all)
	if pw.Header.Power != 2 {
		t.Fatalf("second power phase numbered %d", pw.Header.Power)
	}
	m := fitStats(t, p2, cfg)
	if m.Fit.Passes != 4 || fit.Fit.Passes != 4 {
		t.Errorf("passes: statistics %d, Fit %d, want 4", m.Fit.Passes, fit.Fit.Passes)
	}
	if d := relDiff(t, m, fit); d != 0 {
		t.Errorf("two power phases differ from Fit with power-iters 2 by %.3g relative", d)
	}
	one := cfg
	one.PowerIters = 1
	if _, err := Phase2Stats(ctx, all, pw, one); err == nil {
		t.Error("phase 2 with power-iters 1 of a basis with 2 power passes accepted")
	}
	one.PowerIters = -1
	if _, err := Phase2Stats(ctx, all, pw, one); err == nil {
		t.Error("phase 2 with power-iters -1 of a basis with power passes accepted")
	}
}
