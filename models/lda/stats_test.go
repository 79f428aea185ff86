package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// shards returns the corpus as one in-memory source and as two shards that
// split it at frac.
func shards(t *testing.T, cc synth.LDAConfig, frac float64) (all, a, b *stream.MemoryDocs, truth *models.Model) {
	t.Helper()
	c, truth := corpus(t, cc)
	docs, err := stream.Collect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	cut := int(frac * float64(docs.Len()))
	part := func(lo, hi int) *stream.MemoryDocs {
		d := &stream.Docs{Offsets: []int{0}}
		for i := lo; i < hi; i++ {
			d.AppendDoc(docs.Doc(i))
		}
		return &stream.MemoryDocs{All: d, Terms: cc.Vocab, BatchRows: 512}
	}
	return part(0, docs.Len()), part(0, cut), part(cut, docs.Len()), truth
}

// twoPhase runs both phases over the shards (phase 2 with the W of the merged
// phase 1) and returns the merged phase-2 statistics.
func twoPhase(t *testing.T, cfg Config, srcs ...stream.DocSource) *implicit.TopicStats {
	t.Helper()
	_, p2 := powerRoute(t, cfg, 0, srcs...)
	return p2
}

// relDiff is the largest difference between the topics and weights of two
// models, relative to the largest entry of b.
func relDiff(t *testing.T, a, b *models.Model) float64 {
	t.Helper()
	if a.K != b.K || a.D != b.D {
		t.Fatalf("models of %d×%d and %d×%d", a.K, a.D, b.K, b.D)
	}
	var diff, scale float64
	for i := range a.K {
		for j := range a.D {
			diff = max(diff, math.Abs(a.Topics[i][j]-b.Topics[i][j]))
			scale = max(scale, math.Abs(b.Topics[i][j]))
		}
	}
	out := diff / scale
	for i := range a.K {
		out = max(out, math.Abs(a.Alpha[i]-b.Alpha[i])/math.Abs(b.Alpha[i]))
	}
	return out
}

func fitStats(t *testing.T, st *implicit.TopicStats, cfg Config) *models.Model {
	t.Helper()
	m, err := FitStats(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStatsMergeEqualsUnion is the acceptance test of mergeable statistics:
// fit(merge(stats(A), stats(B))) against fit(stats(A∪B)) and Fit(A∪B).
//
// Statistics are Fit's two passes with the same exact totals (rounded
// fixed-point sums of the batches' partials), so one shard holding
// everything gives Fit's model bit for bit. Two shards cut inside a batch
// (here at 37%) form other partials, which changes the statistics in the
// last bits (relative 1e-16); the eigendecompositions and the power
// iterations amplify that by the conditioning of the problem, far below
// 1e-9 for well-separated topics. So the merge is compared with tolerance
// 1e-9 relative, and exact comparisons are made where the arithmetic is the
// same (one shard vs Fit, a file round trip vs memory). That is with
// float64 batch sums; with the default float32 ones, shards that cut the
// batches elsewhere round differently at relative 6e-8 per operation, and
// the merged fit is compared with tolerance 1e-5.
func TestStatsMergeEqualsUnion(t *testing.T) {
	for _, f64 := range []bool{true, false} {
		tol := 1e-5
		if f64 {
			tol = 1e-9
		}
		t.Run(fmt.Sprintf("float64=%v", f64), func(t *testing.T) { testStatsMerge(t, tol, f64) })
	}
}

func testStatsMerge(t *testing.T, tol float64, f64 bool) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cc   synth.LDAConfig
		cfg  Config
	}{
		{"exact", synth.LDAConfig{Docs: 6000, Vocab: 200, K: 5, Alpha0: 1, DocLen: 80, Seed: 21}, Config{K: 5, Alpha0: 1, Seed: 2, Workers: 2}},
		{"randomized", synth.LDAConfig{Docs: 6000, Vocab: 600, K: 5, Alpha0: 1, DocLen: 80, Seed: 22}, Config{K: 5, Alpha0: 1, Seed: 2, Workers: 2}},
		{"single", synth.LDAConfig{Docs: 6000, Vocab: 200, K: 4, DocLen: 80, Seed: 23, Single: true}, Config{K: 4, Single: true, Seed: 2, Workers: 2}},
	} {
		c.cfg.float64Sums = f64
		t.Run(c.name, func(t *testing.T) {
			all, a, b, truth := shards(t, c.cc, 0.37)
			union := fitStats(t, twoPhase(t, c.cfg, all), c.cfg)
			mergedStats := twoPhase(t, c.cfg, a, b)
			merged := fitStats(t, mergedStats, c.cfg)
			if mergedStats.Triple.Docs != union.Fit.Docs || mergedStats.Header.Shards != 2 {
				t.Errorf("merged statistics of %d documents in %d shards, union %d", mergedStats.Triple.Docs, mergedStats.Header.Shards, union.Fit.Docs)
			}
			if d := relDiff(t, merged, union); d > tol {
				t.Errorf("merge(stats(A), stats(B)) fit differs from stats(A∪B) fit by %.3g relative (tolerance %g)", d, tol)
			} else {
				t.Logf("merged vs union: %.3g relative", d)
			}
			// The file round trip is lossless: the same model bit for bit.
			path := filepath.Join(t.TempDir(), "all.stats")
			if err := implicit.WriteTopicStats(context.Background(), path, mergedStats); err != nil {
				t.Fatal(err)
			}
			back, err := implicit.ReadTopicStats(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := relDiff(t, fitStats(t, back, c.cfg), merged); d != 0 {
				t.Errorf("fit from the written file differs from the fit in memory by %.3g", d)
			}
			fit, err := Fit(ctx, all, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := relDiff(t, union, fit); d != 0 || fit.Fit.Docs != union.Fit.Docs {
				t.Errorf("one-shard statistics fit differs from Fit by %.3g relative (%d vs %d documents)", d, union.Fit.Docs, fit.Fit.Docs)
			}
			fitEv, _ := models.Evaluate(fit, truth)
			ev, _ := models.Evaluate(merged, truth)
			t.Logf("mean ℓ1 to truth: merged statistics %.4f, Fit %.4f", ev.MeanL1, fitEv.MeanL1)
		})
	}
}

// TestStatsIncremental covers a nightly append: phase 2 of new data reuses
// the stored W while the merged phase-1 basis has drifted little.
func TestStatsIncremental(t *testing.T) {
	ctx := context.Background()
	cfg := Config{K: 5, Alpha0: 1, Seed: 2, Workers: 2}
	all, old, night, _ := shards(t, synth.LDAConfig{Docs: 6000, Vocab: 200, K: 5, Alpha0: 1, DocLen: 80, Seed: 24}, 0.8)
	p1old, err := Phase1Stats(ctx, old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p2old, err := Phase2Stats(ctx, old, p1old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p1night, err := Phase1Stats(ctx, night, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p1old.Merge(p1night); err != nil {
		t.Fatal(err)
	}
	angle, err := BasisDrift(ctx, p1old, p2old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("basis drift after adding 20%% more documents: %.3g rad", angle)
	if !(angle > 0 && angle < 0.2) {
		t.Errorf("drift %.3g rad, want small but positive", angle)
	}
	// Reuse the old W for tonight's phase 2: mergeable with the old phase 2.
	p2night, err := Phase2Stats(ctx, night, p2old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p2old.Merge(p2night); err != nil {
		t.Fatal(err)
	}
	m := fitStats(t, p2old, cfg)
	full := fitStats(t, twoPhase(t, cfg, all), cfg)
	var worst float64
	for i := range m.K {
		worst = max(worst, models.L1(m.Topics[i], full.Topics[i]))
	}
	t.Logf("old basis vs fresh basis: topics differ by ℓ1 ≤ %.3g", worst)
	if worst > 0.05 {
		t.Errorf("fit with the reused basis differs from a fresh one by ℓ1 %.3g", worst)
	}
	// A phase-2 shard whitened with the new W cannot merge with the old ones.
	p2new, err := Phase2Stats(ctx, night, p1old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p2old.Merge(p2new); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("merge of phase-2 statistics of different bases: %v", err)
	}
	if a, err := BasisDrift(ctx, p1old, &implicit.TopicStats{Header: p2new.Header, TopicPayload: p2new.TopicPayload}, cfg); err != nil || a > 1e-6 {
		t.Errorf("drift of a basis against itself: %g, %v", a, err)
	}
}

// TestStatsRefused checks the configuration checks between phases and fit.
func TestStatsRefused(t *testing.T) {
	ctx := context.Background()
	cfg := Config{K: 3, Alpha0: 1, Seed: 2, Workers: 1}
	all, _, _, _ := shards(t, synth.LDAConfig{Docs: 500, Vocab: 100, K: 3, Alpha0: 1, DocLen: 40, Seed: 25}, 0.5)
	p1, err := Phase1Stats(ctx, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]Config{
		"k":      {K: 4, Alpha0: 1, Seed: 2},
		"alpha0": {K: 3, Alpha0: 2, Seed: 2},
		"seed":   {K: 3, Alpha0: 1, Seed: 3},
		"model":  {K: 3, Single: true, Seed: 2},
	} {
		if _, err := Phase2Stats(ctx, all, p1, bad); !errors.Is(err, statsfile.ErrIncompatible) {
			t.Errorf("%s: phase 2 with a different configuration: %v", name, err)
		}
	}
	if _, err := FitStats(ctx, p1, cfg); err == nil {
		t.Error("fit from phase-1 statistics succeeded")
	}
	if _, err := PowerStats(ctx, all, p1, cfg); err == nil || !strings.Contains(err.Error(), "exactly") {
		t.Errorf("power pass of exactly whitened statistics: %v", err)
	}
}

// TestRefineEMAfterStats checks that the EM passes over the documents
// after the spectral fit of merged statistics (shards cut at a batch
// boundary) give the model of Fit with the same EM passes, bit for bit,
// and that documents of another vocabulary size are refused.
func TestRefineEMAfterStats(t *testing.T) {
	ctx := context.Background()
	cc := synth.LDAConfig{Docs: 2000, Vocab: 150, K: 4, Alpha0: 1, DocLen: 40, Seed: 31}
	all, a, b, _ := shards(t, cc, 0.512) // cut at document 1024, a batch boundary
	for _, em := range []EM{
		{Passes: 3, FitAlpha: true},
		// A sample of a quarter of the tokens: the first passes run on it
		// in memory, with warm starts.
		{Passes: 8, FitAlpha: true, Sample: 20000},
	} {
		fitThenRefine(t, all, a, b, Config{K: 4, Alpha0: 1, Seed: 2, Workers: 2, EM: em})
	}
	cfg := Config{K: 4, Alpha0: 1, Seed: 2, Workers: 2, EM: EM{Passes: 3}}
	got := fitStats(t, twoPhase(t, cfg, b, a), cfg)
	other, _, _, _ := shards(t, synth.LDAConfig{Docs: 300, Vocab: 90, K: 4, Alpha0: 1, DocLen: 40, Seed: 32}, 0.5)
	if err := RefineEM(ctx, other, got, cfg); err == nil || !strings.Contains(err.Error(), "90") {
		t.Errorf("EM over documents of 90 words on a model of 150: %v", err)
	}
}

// fitThenRefine checks that FitStats of the shards a and b followed by
// RefineEM over all gives Fit(all, cfg) bit for bit.
func fitThenRefine(t *testing.T, all, a, b stream.DocSource, cfg Config) {
	t.Helper()
	ctx := context.Background()
	want, err := Fit(ctx, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want.Fit.EM == nil || want.Fit.EM.Passes == 0 {
		t.Fatal("Fit ran no EM passes")
	}
	got := fitStats(t, twoPhase(t, cfg, b, a), cfg)
	if got.Fit.EM != nil {
		t.Fatal("FitStats ran EM passes without documents")
	}
	if err := RefineEM(ctx, all, got, cfg); err != nil {
		t.Fatal(err)
	}
	got.Fit.Seconds, want.Fit.Seconds = 0, 0
	if !reflect.DeepEqual(got.Topics, want.Topics) || !reflect.DeepEqual(got.Alpha, want.Alpha) || !reflect.DeepEqual(got.Fit, want.Fit) {
		t.Errorf("%+v: FitStats + RefineEM differs from Fit: %.3g relative; passes %d vs %d", cfg.EM, relDiff(t, got, want), got.Fit.Passes, want.Fit.Passes)
	}
	if cfg.EM.Sample > 0 && (want.Fit.EM.Sample == nil || want.Fit.EM.Sample.Passes == 0) {
		t.Errorf("%+v: no pass ran on a sample", cfg.EM)
	}
}

// TestEMPassesFromShards checks the EM passes as a statistics route: the
// spectral fit of merged statistics, then per pass EMPassStats over shards
// (cut anywhere, merged in either order) and EMStep, with the model saved
// and read back between passes, give Fit's model bit for bit; a pass of a
// finished model is refused.
func TestEMPassesFromShards(t *testing.T) {
	ctx := context.Background()
	cc := synth.LDAConfig{Docs: 2000, Vocab: 150, K: 4, Alpha0: 1, DocLen: 40, Seed: 31}
	all, a, b, _ := shards(t, cc, 0.512)
	_, c, e, _ := shards(t, cc, 0.3) // not at a batch boundary
	cfg := Config{K: 4, Alpha0: 1, Seed: 2, Workers: 2, EM: EM{Passes: 3, FitAlpha: true}}
	want, err := Fit(ctx, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := fitStats(t, twoPhase(t, cfg, b, a), cfg)
	path := filepath.Join(t.TempDir(), "model.json")
	var stale *EMStats
	for pass := 0; !EMDone(m, cfg); pass++ {
		first, second := []stream.DocSource{c, e}, []stream.DocSource{e, c}
		order := first
		if pass%2 == 1 {
			order = second
		}
		total, err := EMPassStats(ctx, order[0], m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		more, err := EMPassStats(ctx, order[1], m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := total.Merge(more); err != nil {
			t.Fatal(err)
		}
		if pass == 1 {
			// Statistics of the pass before (another model) are refused.
			if err := total.Merge(stale); !errors.Is(err, statsfile.ErrIncompatible) {
				t.Errorf("merged EM statistics of two models: %v", err)
			}
			if err := EMStep(m, stale, cfg); !errors.Is(err, statsfile.ErrIncompatible) {
				t.Errorf("M-step from the statistics of another model: %v", err)
			}
		}
		stale = more
		if err := EMStep(m, total, cfg); err != nil {
			t.Fatal(err)
		}
		if err := m.Write(path); err != nil {
			t.Fatal(err)
		}
		if m, err = models.Read(path); err != nil {
			t.Fatal(err)
		}
	}
	// Compared as read from files (the plan record as its bytes).
	m.Fit.Seconds, want.Fit.Seconds = 0, 0
	if err := want.Write(path); err != nil {
		t.Fatal(err)
	}
	if want, err = models.Read(path); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("EM passes from shards differ from Fit: %.3g relative; passes %d vs %d", relDiff(t, m, want), m.Fit.Passes, want.Fit.Passes)
	}
	if _, err := EMPassStats(ctx, all, m, cfg); !errors.Is(err, ErrEMDone) {
		t.Errorf("a pass of a finished model: %v", err)
	}
}
