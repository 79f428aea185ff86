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
	if m.Fit.Passes > 3 {
		t.Errorf("%d passes, want ≤ 3", m.Fit.Passes)
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

// TestExactWhiteningSmallVocabulary covers the exact path: a vocabulary of at
// most DefaultExactDim words is whitened from one dense product, so the fit
// takes two passes, and agrees with the randomized path.
func TestExactWhiteningSmallVocabulary(t *testing.T) {
	cc := synth.LDAConfig{Docs: 10000, Vocab: 200, K: 5, Alpha0: 1, DocLen: 100, Seed: 11}
	m, ev := fitAndEval(t, cc, Config{K: 5, Seed: 1})
	_, evr := fitAndEval(t, cc, Config{K: 5, Seed: 1, ExactDim: -1})
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
// tensor to rounding, so with the same seed the topics agree closely.
func TestImplicitMatchesExplicit(t *testing.T) {
	for _, single := range []bool{false, true} {
		cc := synth.LDAConfig{Docs: 4000, Vocab: 500, K: 4, Alpha0: 1, DocLen: 60, Seed: 12, Single: single}
		ex, _ := fitAndEval(t, cc, Config{K: 4, Seed: 3, Single: single})
		im, _ := fitAndEval(t, cc, Config{K: 4, Seed: 3, Single: single, Implicit: true})
		for i := range ex.Topics {
			// The power iterations follow the same path; differences are
			// rounding amplified by the iteration, far below sampling error.
			if d := models.L1(ex.Topics[i], im.Topics[i]); d > 1e-6 {
				t.Errorf("single=%v topic %d: explicit and implicit differ by ℓ1 %.3g", single, i, d)
			}
		}
	}
}
