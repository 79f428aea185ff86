package lda

import (
	"context"
	"iter"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestOnlineEMWorkersIdentical checks that online EM's model does not
// depend on the number of workers, bit for bit.
func TestOnlineEMWorkersIdentical(t *testing.T) {
	var ms []*models.Model
	for _, run := range []struct{ workers, rows int }{{1, 64}, {3, 64}} {
		cc := synth.LDAConfig{Docs: 2000, Vocab: 200, K: 4, Alpha0: 1, DocLen: 40, Seed: 5, BatchRows: run.rows}
		src, truth := corpus(t, cc)
		m := cloneModel(truth)
		cfg := Config{K: 4, Alpha0: 1, Workers: run.workers, EM: EM{Passes: 2, FitAlpha: true, Online: true, MiniBatch: 300}}
		if err := RefineEM(context.Background(), src, m, cfg); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for i := 1; i < len(ms); i++ {
		if !reflect.DeepEqual(ms[0].Topics, ms[i].Topics) || !reflect.DeepEqual(ms[0].Alpha, ms[i].Alpha) || !reflect.DeepEqual(ms[0].Fit.EM, ms[i].Fit.EM) {
			t.Errorf("online EM's model differs between runs 0 and %d (workers, batch rows)", i)
		}
	}
	if !ms[0].Fit.EM.Online || ms[0].Fit.EM.Passes != 2 {
		t.Errorf("the model records %+v, want 2 online passes", ms[0].Fit.EM)
	}
}

// TestOnlineEMKeepsTruth starts online EM from the true topics of a
// generated corpus and checks that two passes keep them within the bars of
// the batch tests, and keep the training bound where it was.
func TestOnlineEMKeepsTruth(t *testing.T) {
	for _, single := range []bool{false, true} {
		cc := synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 50, Seed: 21, Single: single}
		src, truth := corpus(t, cc)
		m := cloneModel(truth)
		cfg := Config{K: 5, Alpha0: 1, Single: single, Workers: 2, EM: EM{Passes: 2, Tol: 1e-12, FitAlpha: true, Online: true, MiniBatch: 250}}
		if err := RefineEM(context.Background(), src, m, cfg); err != nil {
			t.Fatal(err)
		}
		ev, err := models.Evaluate(m, truth)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("single=%t: mean ℓ1 %.4f, max %.4f, α rel err %.3f, bounds %.5v", single, ev.MeanL1, ev.MaxL1, ev.AlphaRelErr, m.Fit.EM.Bounds)
		// The batch tests' bar on this corpus is the spectral fit's ℓ1 +
		// 0.01 (about 0.1); the maximum-likelihood topics of 3000
		// documents lie about 0.1 from the truth.
		if ev.MeanL1 > 0.12 || ev.Found != 5 {
			t.Errorf("single=%t: online EM moved the true topics to mean ℓ1 %.4f, found %d/5", single, ev.MeanL1, ev.Found)
		}
		// Batch EM's α from the same start, for the bar of α.
		b := cloneModel(truth)
		cfg.EM.Online = false
		if err := RefineEM(context.Background(), src, b, cfg); err != nil {
			t.Fatal(err)
		}
		evb, err := models.Evaluate(b, truth)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("single=%t: batch EM: mean ℓ1 %.4f, α rel err %.3f", single, evb.MeanL1, evb.AlphaRelErr)
		// Online α moves more (its mean of E log θ mixes mini-batches
		// E-stepped with different α): 0.28 against 0.16 here.
		if ev.AlphaRelErr > evb.AlphaRelErr+0.15 {
			t.Errorf("single=%t: online EM moved α by %.3f relatively, batch EM by %.3f", single, ev.AlphaRelErr, evb.AlphaRelErr)
		}
	}
}

// TestOnlineEMImprovesHeldOut perturbs the true topics, runs one online
// pass from them and checks that the held-out perplexity of the result is
// better than the start's.
func TestOnlineEMImprovesHeldOut(t *testing.T) {
	// Documents 0–2999 train, 3000–3499 are held out.
	all, truth := corpus(t, synth.LDAConfig{Docs: 3500, Vocab: 300, K: 5, Alpha0: 1, DocLen: 50, Seed: 8, BatchRows: 500})
	src := docRange{all, 0, 3000}
	test := docRange{all, 3000, 3500}
	start := cloneModel(truth)
	r := rand.New(rand.NewPCG(1, 2))
	for _, row := range start.Topics {
		s := 0.0
		for w := range row {
			row[w] *= 0.2 + 1.6*r.Float64()
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
	}
	perp := func(m *models.Model) float64 {
		h, err := Perplexity(context.Background(), test, m.Topics, m.Alpha, ScoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return h.Perplexity
	}
	m := cloneModel(start)
	cfg := Config{K: 5, Alpha0: 1, Workers: 2, EM: EM{Passes: 1, FitAlpha: true, Online: true, MiniBatch: 200}}
	if err := RefineEM(context.Background(), src, m, cfg); err != nil {
		t.Fatal(err)
	}
	p0, p1, pt := perp(start), perp(m), perp(truth)
	t.Logf("held-out perplexity: perturbed start %.2f, after one online pass %.2f, truth %.2f", p0, p1, pt)
	if !(p1 < p0-0.5*(p0-pt)) {
		t.Errorf("one online pass took the held-out perplexity from %.2f to %.2f (truth %.2f): not half the way", p0, p1, pt)
	}
}

// TestOnlineEMBadParams checks that step sizes outside their ranges are
// refused before any pass.
func TestOnlineEMBadParams(t *testing.T) {
	cc := synth.LDAConfig{Docs: 200, Vocab: 50, K: 3, Alpha0: 1, DocLen: 20, Seed: 3}
	src, truth := corpus(t, cc)
	for _, c := range []struct {
		em   EM
		want string
	}{
		{EM{Kappa: 0.5}, "κ"},
		{EM{Kappa: 1.2}, "κ"},
		{EM{Kappa: -1}, "κ"},
		{EM{Tau0: -1}, "τ₀"},
		{EM{MiniBatch: -5}, "mini-batch"},
	} {
		c.em.Passes, c.em.Online = 1, true
		err := RefineEM(context.Background(), src, cloneModel(truth), Config{K: 3, Alpha0: 1, EM: c.em})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.em, err, c.want)
		}
		// Fit refuses them before its spectral passes.
		progress := 0
		_, err = Fit(context.Background(), src, Config{K: 3, Alpha0: 1, EM: c.em, Progress: func(Progress) { progress++ }})
		if err == nil || !strings.Contains(err.Error(), c.want) || progress != 0 {
			t.Errorf("Fit with %+v: %v after %d progress reports, want an error naming %s before any pass", c.em, err, progress, c.want)
		}
	}
	if _, err := EMHeader(cloneModel(truth), Config{K: 3, EM: EM{Passes: 1, Online: true}}); err == nil {
		t.Error("the statistics route accepted online EM")
	}
}

// TestOnlineEMCheckpointResume stops an online refinement in its third
// pass, resumes it from the checkpoint of the second and compares the
// model with an uninterrupted one, bit for bit; a checkpoint of batch EM is
// refused.
func TestOnlineEMCheckpointResume(t *testing.T) {
	cc := synth.LDAConfig{Docs: 3000, Vocab: 200, K: 4, Alpha0: 1, DocLen: 40, Seed: 17, BatchRows: 100}
	cfg := Config{K: 4, Alpha0: 1, Seed: 5, Workers: 2, Third: Explicit, EM: EM{Passes: 4, Tol: 1e-12, FitAlpha: true, Online: true, MiniBatch: 400}}
	src, _ := corpus(t, cc)
	cfg = resumeAfterCancel(t, src, cfg, func(p Progress) bool {
		return p.Stage == "em" && p.Pass == 5 && p.Docs >= 1200 // passes 1–2 spectral, 3–4 EM done
	}, nil)
	cfg.EM.Online = false
	if _, err := Fit(context.Background(), src, cfg); err == nil || !strings.Contains(err.Error(), "another fit") {
		t.Errorf("online EM checkpoint used for batch EM: %v", err)
	}
}

// docRange is the batches of src whose documents lie in [from, to).
type docRange struct {
	src      stream.DocSource
	from, to int64
}

func (r docRange) Info() stream.Info { return r.src.Info() }

func (r docRange) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		for b, err := range r.src.Docs(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			if b.Start < r.from || b.Start+int64(b.Len()) > r.to {
				b.Release()
				continue
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// cloneModel is a deep copy of m's parameters, with fit statistics (empty
// when m has none).
func cloneModel(m *models.Model) *models.Model {
	c := *m
	c.Fit = &models.FitStats{}
	if m.Fit != nil {
		*c.Fit = *m.Fit
	}
	c.Alpha = append([]float64(nil), m.Alpha...)
	c.Topics = make([][]float64, len(m.Topics))
	for j, row := range m.Topics {
		c.Topics[j] = append([]float64(nil), row...)
	}
	return &c
}
