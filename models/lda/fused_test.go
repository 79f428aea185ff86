package lda

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestFusedPass: on a corpus with a negative direction of M̂2 (header
// words) and a sampled cube sum, the power pass gathers the third moment's
// statistics over its basis and the cubes of the sample come from the
// documents it kept: one pass fewer than the two passes apart, and their
// model to the rounding of the passes' partial sums (float32, or float64),
// with the same sample and its error; the same bytes whatever the workers;
// the passes apart where the kept documents would not fit the memory
// budget; and a fit stopped inside that pass resumes from its checkpoint to
// the uninterrupted model.
func TestFusedPass(t *testing.T) {
	ctx := context.Background()
	lda, _ := corpus(t, synth.LDAConfig{Docs: 40000, Vocab: 1000, K: 30, Alpha0: 1, DocLen: 50, Seed: 42, BatchRows: 1000})
	src := headerDocs{lda, 1}
	base := Config{K: 5, Alpha0: 1, Seed: 1, EM: EM{Passes: -1}, CubeSample: 500000}
	var tokens int64
	for _, f64 := range []bool{false, true} {
		cfg := base
		cfg.float64Sums = f64
		m, err := Fit(ctx, src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		tokens = m.Fit.Tokens
		apart := cfg
		apart.noFuse = true
		ref, err := Fit(ctx, src, apart)
		if err != nil {
			t.Fatal(err)
		}
		cs, rs := m.Fit.CubeSample, ref.Fit.CubeSample
		if cs == nil || rs == nil || cs.Rate != rs.Rate || cs.Redone || rs.Redone {
			t.Fatalf("float64 %v: cube sample %+v, apart %+v", f64, cs, rs)
		}
		if m.Fit.Passes != ref.Fit.Passes-1 || !m.Fit.PairFromPower || !m.Fit.PowerFused || ref.Fit.PowerFused {
			t.Errorf("float64 %v: %d passes (apart %d), pair from the power pass %v", f64, m.Fit.Passes, ref.Fit.Passes, m.Fit.PairFromPower)
		}
		topics := 0.0
		for i := range m.Topics {
			topics = max(topics, models.L1(m.Topics[i], ref.Topics[i]))
		}
		stdErr := math.Abs(cs.StdErr-rs.StdErr) / rs.StdErr
		t.Logf("float64 %v: %d passes against %d; topics apart by ℓ1 ≤ %.2g; the sample's error %.4g against %.4g", f64, m.Fit.Passes, ref.Fit.Passes, topics, cs.StdErr, rs.StdErr)
		tol := 1e-4
		if f64 {
			tol = 1e-9
		}
		if topics > tol || stdErr > tol {
			t.Errorf("float64 %v: topics apart by ℓ1 %.3g, the sample's error by %.3g (tolerance %g)", f64, topics, stdErr, tol)
		}
	}
	// A memory budget the fit fits in, but not with the kept documents and
	// the basis-wide sums: the two passes apart.
	plan, _, err := planFor(ctx, src, base)
	if err != nil {
		t.Fatal(err)
	}
	extra := fusedBytes(base.cubeSample(tokens, 1000, 5, 1), tokens, 1000, 15)
	tight := base
	tight.Memory = plan.Predicted.PeakBytes + extra/4
	if m, err := Fit(ctx, src, tight); err != nil || m.Fit.PowerFused || m.Fit.Passes != 3 {
		t.Errorf("a budget short of the fused pass's memory: %v, fused %v", err, m != nil && m.Fit.PowerFused)
	}
	cfg := base
	cfg.Workers = 3
	var plans []*Plan
	cfg.OnPlan = func(p *Plan) { plans = append(plans, p) }
	three, err := Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The plan is revised when the passes fuse: the peak with what the
	// pass keeps (the command line's soft memory limit follows it).
	if len(plans) != 2 || !plans[1].Fused || plans[1].Predicted.PeakBytes <= plans[0].Predicted.PeakBytes || !strings.Contains(plans[1].String(), "keeps the cube sample's documents") {
		t.Errorf("plans reported: %v", plans)
	}
	cfg.OnPlan = nil
	cfg.Workers = 1
	one, err := Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sameModel(one, three) {
		t.Errorf("3 workers: another model than 1 worker's")
	}

	// Stopped inside the fused pass (pass 2), resumed from its checkpoint.
	cfg.Workers = 2
	cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "fused", Every: -1}
	got, read := stopAndResume(t, src, cfg, 2, 20000)
	if read == 0 || read >= 40 {
		t.Errorf("the resumed fit read %d batches of pass 2, want fewer than all 40", read)
	}
	if !sameModel(got, one) || got.Fit.Passes != one.Fit.Passes {
		t.Errorf("the resumed fit (%d passes) differs from an uninterrupted one (%d)", got.Fit.Passes, one.Fit.Passes)
	}
}

// TestFusedPassEMSample: in the default fit the EM passes keep their
// sample from the fused pass too, and by default it is the cube sample's
// documents: the cubes come from that copy, to the same model as from a
// copy of their own.
func TestFusedPassEMSample(t *testing.T) {
	ctx := context.Background()
	lda, _ := corpus(t, synth.LDAConfig{Docs: 40000, Vocab: 1000, K: 30, Alpha0: 1, DocLen: 50, Seed: 42, BatchRows: 1000})
	src := headerDocs{lda, 1}
	cfg := Config{K: 5, Alpha0: 1, Seed: 1, EM: EM{Passes: 2, Sample: 500000}, CubeSample: 500000}
	m, err := Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	own := cfg
	own.ownCubeCopy = true
	ref, err := Fit(ctx, src, own)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Fit.PowerFused || m.Fit.CubeSample == nil || !sameModel(m, ref) {
		t.Errorf("fused %v, cube sample %+v: the model from the EM sample's copy differs from its own copy's: %v", m.Fit.PowerFused, m.Fit.CubeSample, !sameModel(m, ref))
	}
	// The samples are the same documents by default.
	tap := &emTap{em: cfg.EM.withDefaults(), d: 1000, k: 5, seed: cfg.Seed}
	tap.source(src, m.Fit.Tokens)
	if tap.sameSample(cfg.cubeSample(m.Fit.Tokens, 1000, 5, 1)) == nil {
		t.Errorf("the EM sample and the cube sample are other documents")
	}
}
