package lda

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

func corpus(t testing.TB, cfg synth.LDAConfig) (*synth.Corpus, *models.Model) {
	t.Helper()
	c, err := synth.NewLDA(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Truth
	return c, &models.Model{Model: tr.Model, K: tr.K, D: tr.D, Alpha0: tr.Alpha0, Alpha: tr.Alpha, Topics: tr.Topics}
}

func fitAndEval(t testing.TB, cfg synth.LDAConfig, fc Config) (*models.Model, *models.Evaluation) {
	t.Helper()
	src, truth := corpus(t, cfg)
	m, err := Fit(context.Background(), src, fc)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	ev, err := models.Evaluate(m, truth)
	if err != nil {
		t.Fatal(err)
	}
	return m, ev
}

// TestLDAAccuracy is the acceptance case of issue 3: a correct implementation
// gets a mean matched ℓ1 of about 0.06 here.
func TestLDAAccuracy(t *testing.T) {
	m, ev := fitAndEval(t, synth.LDAConfig{Docs: 20000, Vocab: 2000, K: 10, Alpha0: 1, DocLen: 200, Seed: 42},
		Config{K: 10, Alpha0: 1, Seed: 1})
	t.Logf("mean ℓ1 %.4f, max %.4f, found %d/10, α rel err %.3f, passes %d, %.2fs",
		ev.MeanL1, ev.MaxL1, ev.Found, ev.AlphaRelErr, m.Fit.Passes, m.Fit.Seconds)
	t.Logf("fit: %+v", m.Fit)
	if ev.MeanL1 > 0.07 || ev.Found != 10 {
		t.Errorf("mean ℓ1 %.4f (want ≤ 0.07), found %d (want 10)", ev.MeanL1, ev.Found)
	}
	if m.Fit.Passes != 2 {
		t.Errorf("%d passes, want 2", m.Fit.Passes)
	}
}

// TestSingleTopicAccuracy is the single-topic analogue: one topic per
// document makes the moments sharper, so the same bound holds with margin.
func TestSingleTopicAccuracy(t *testing.T) {
	m, ev := fitAndEval(t, synth.LDAConfig{Docs: 20000, Vocab: 2000, K: 10, DocLen: 200, Seed: 43, Single: true},
		Config{K: 10, Single: true, Seed: 1})
	t.Logf("mean ℓ1 %.4f, max %.4f, found %d/10, weight rel err %.3f", ev.MeanL1, ev.MaxL1, ev.Found, ev.AlphaRelErr)
	if m.Model != "topic" || m.Alpha0 != 0 {
		t.Errorf("model %q alpha0 %g", m.Model, m.Alpha0)
	}
	if ev.MeanL1 > 0.07 || ev.Found != 10 || ev.AlphaRelErr > 0.1 {
		t.Errorf("mean ℓ1 %.4f (want ≤ 0.07), found %d (want 10), weight error %.3f", ev.MeanL1, ev.Found, ev.AlphaRelErr)
	}
	var s float64
	for _, a := range m.Alpha {
		s += a
	}
	if s < 0.9 || s > 1.1 {
		t.Errorf("weights sum to %g, want ≈ 1", s)
	}
}

// TestPowerIters checks that power passes of the whitening cost one pass
// each and keep the accuracy of the default two-pass fit.
func TestPowerIters(t *testing.T) {
	cc := synth.LDAConfig{Docs: 10000, Vocab: 1000, K: 6, Alpha0: 1, DocLen: 100, Seed: 13}
	m0, ev0 := fitAndEval(t, cc, Config{K: 6, Alpha0: 1, Seed: 1})
	m1, ev1 := fitAndEval(t, cc, Config{K: 6, Alpha0: 1, Seed: 1, PowerIters: 1})
	t.Logf("mean ℓ1 %.4f in %d passes, %.4f in %d passes with a power pass", ev0.MeanL1, m0.Fit.Passes, ev1.MeanL1, m1.Fit.Passes)
	if m0.Fit.Passes != 2 || m1.Fit.Passes != 3 {
		t.Errorf("passes %d and %d, want 2 and 3", m0.Fit.Passes, m1.Fit.Passes)
	}
	// Sampling error here is about 0.05; the two whitenings span the topics
	// about equally well once topics are mapped back through M̂2·W.
	if ev1.Found != 6 || ev1.MeanL1 > ev0.MeanL1+0.01 {
		t.Errorf("with a power pass: mean ℓ1 %.4f, found %d; without %.4f", ev1.MeanL1, ev1.Found, ev0.MeanL1)
	}
}

// TestExactWhiteningSmallVocabulary covers the exact path: a vocabulary of at
// most DefaultExactDim words is whitened from one dense product, so the fit
// takes two passes, and agrees with the randomized path.
func TestExactWhiteningSmallVocabulary(t *testing.T) {
	cc := synth.LDAConfig{Docs: 10000, Vocab: 200, K: 5, Alpha0: 1, DocLen: 100, Seed: 11}
	m, ev := fitAndEval(t, cc, Config{K: 5, Alpha0: 1, Seed: 1})
	_, evr := fitAndEval(t, cc, Config{K: 5, Alpha0: 1, Seed: 1, ExactDim: -1})
	t.Logf("exact: mean ℓ1 %.4f (randomized %.4f), passes %d", ev.MeanL1, evr.MeanL1, m.Fit.Passes)
	if m.Fit.Whitening != "exact" || m.Fit.Passes != 2 {
		t.Errorf("whitening %q in %d passes, want exact in 2", m.Fit.Whitening, m.Fit.Passes)
	}
	// 10,000 documents of 100 words over 200 terms: sampling error ≈ 0.05.
	if ev.MeanL1 > 0.1 || ev.Found != 5 || math.Abs(ev.MeanL1-evr.MeanL1) > 0.02 {
		t.Errorf("exact mean ℓ1 %.4f, found %d, randomized %.4f", ev.MeanL1, ev.Found, evr.MeanL1)
	}
}

// TestImplicitMatchesExplicit runs the decomposition on the implicit operator
// over cached whitened rows and on the packed tensor: the two are the same
// tensor to rounding, so with the same seed the topics agree closely. (The
// implicit path sums in float64; so does the packed one here.)
func TestImplicitMatchesExplicit(t *testing.T) {
	for _, single := range []bool{false, true} {
		cc := synth.LDAConfig{Docs: 4000, Vocab: 500, K: 4, Alpha0: 1, DocLen: 60, Seed: 12, Single: single}
		ex, _ := fitAndEval(t, cc, Config{K: 4, Alpha0: 1, Seed: 3, Single: single, float64Sums: true})
		im, _ := fitAndEval(t, cc, Config{K: 4, Alpha0: 1, Seed: 3, Single: single, Implicit: true})
		for i := range ex.Topics {
			// The power iterations follow the same path; differences are
			// rounding amplified by the iteration, far below sampling error.
			if d := models.L1(ex.Topics[i], im.Topics[i]); d > 1e-6 {
				t.Errorf("single=%v topic %d: explicit and implicit differ by ℓ1 %.3g", single, i, d)
			}
		}
	}
}

// TestFloat32Sums justifies forming each batch's partial sums in float32:
// the fitted topics move by an ℓ1 distance far below the sampling error
// (mean ℓ1 to the truth ≈ 0.05 here), and the accuracy does not change.
func TestFloat32Sums(t *testing.T) {
	cc := synth.LDAConfig{Docs: 20000, Vocab: 2000, K: 10, Alpha0: 1, DocLen: 200, Seed: 42}
	m32, ev32 := fitAndEval(t, cc, Config{K: 10, Alpha0: 1, Seed: 1})
	m64, ev64 := fitAndEval(t, cc, Config{K: 10, Alpha0: 1, Seed: 1, float64Sums: true})
	var worst float64
	for i := range m32.Topics {
		worst = max(worst, models.L1(m32.Topics[i], m64.Topics[i]))
	}
	t.Logf("float32 vs float64 partial sums: topics differ by ℓ1 ≤ %.2g; mean ℓ1 to the truth %.5f vs %.5f", worst, ev32.MeanL1, ev64.MeanL1)
	if worst > 1e-4 || math.Abs(ev32.MeanL1-ev64.MeanL1) > 1e-4 {
		t.Errorf("float32 partial sums move the topics by ℓ1 %.3g (mean ℓ1 %.5f vs %.5f)", worst, ev32.MeanL1, ev64.MeanL1)
	}
}
