package lda

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mathext"
)

// TestEMBoundNeverDecreases runs plain batch EM passes (Relax 1) from the
// spectral start with a tight per-document tolerance and checks that the training bound
// never decreases from pass to pass, that the refinement keeps (or
// improves) the recovery of the true topics, and that the stopping rule
// ends the passes before the cap.
func TestEMBoundNeverDecreases(t *testing.T) {
	for _, single := range []bool{false, true} {
		cc := synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 50, Seed: 21, Single: single}
		fc := Config{K: 5, Alpha0: 1, Single: single, Seed: 3, Workers: 2}
		m0, ev0 := fitAndEval(t, cc, fc)
		fc.EM = EM{Passes: 40, Tol: 1e-6, FitAlpha: true, EStepTol: 1e-8, EStepPrune: -1, Relax: 1}
		m, ev := fitAndEval(t, cc, fc)
		b := m.Fit.EM.Bounds
		t.Logf("single=%t: spectral mean ℓ1 %.4f, after %d EM passes %.4f; α %.3v; bounds %.5v", single, ev0.MeanL1, m.Fit.EM.Passes, ev.MeanL1, m.Alpha, b)
		if len(b) < 3 {
			t.Fatalf("single=%t: %d EM passes", single, len(b))
		}
		for i := 1; i < len(b); i++ {
			if b[i] < b[i-1]-1e-12*abs(b[i-1]) {
				t.Errorf("single=%t: the bound decreased from pass %d to %d: %.10g → %.10g", single, i, i+1, b[i-1], b[i])
			}
		}
		if b[len(b)-1] <= b[0] {
			t.Errorf("single=%t: EM did not improve the bound: %v", single, b)
		}
		if ev.MeanL1 > ev0.MeanL1+0.01 || ev.Found != 5 {
			t.Errorf("single=%t: mean ℓ1 %.4f after EM (spectral %.4f), found %d/5", single, ev.MeanL1, ev0.MeanL1, ev.Found)
		}
		if m.Fit.Passes != m0.Fit.Passes+m.Fit.EM.Passes {
			t.Errorf("single=%t: %d passes in all, %d spectral + %d EM", single, m.Fit.Passes, m0.Fit.Passes, m.Fit.EM.Passes)
		}
		if !m.Fit.EM.Converged || m.Fit.EM.Passes == 40 {
			t.Errorf("single=%t: the stopping rule did not end the refinement: %d passes", single, m.Fit.EM.Passes)
		}
	}
}

// TestEMRelaxedGoesFurther checks that the over-relaxed M-step (the
// default) reaches a higher training bound than plain EM in the same
// number of passes from the same spectral start, and recovers the true
// topics as well.
func TestEMRelaxedGoesFurther(t *testing.T) {
	cc := synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 50, Seed: 21}
	fc := Config{K: 5, Alpha0: 1, Seed: 3, Workers: 2}
	fc.EM = EM{Passes: 6, Tol: 1e-12, FitAlpha: true, Relax: 1}
	plain, evPlain := fitAndEval(t, cc, fc)
	fc.EM.Relax = 0 // DefaultRelax
	relaxed, evRelaxed := fitAndEval(t, cc, fc)
	bp, br := plain.Fit.EM.Bounds, relaxed.Fit.EM.Bounds
	t.Logf("bounds plain %.7v, relaxed %.7v; mean ℓ1 %.4f and %.4f", bp, br, evPlain.MeanL1, evRelaxed.MeanL1)
	if len(bp) != 6 || len(br) != 6 {
		t.Fatalf("%d and %d passes, want 6", len(bp), len(br))
	}
	if br[0] != bp[0] || br[1] != bp[1] {
		t.Errorf("the first two passes differ (only later M-steps are relaxed): %v and %v", bp[:2], br[:2])
	}
	if br[5] <= bp[5] {
		t.Errorf("after 6 passes the relaxed bound %.10g is not above plain EM's %.10g", br[5], bp[5])
	}
	if evRelaxed.MeanL1 > evPlain.MeanL1+0.005 || evRelaxed.Found != 5 {
		t.Errorf("relaxed: mean ℓ1 %.4f (plain %.4f), found %d/5", evRelaxed.MeanL1, evPlain.MeanL1, evRelaxed.Found)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestEMWorkersIdentical checks that the refined model does not depend on
// the number of workers, bit for bit.
func TestEMWorkersIdentical(t *testing.T) {
	cc := synth.LDAConfig{Docs: 2000, Vocab: 200, K: 4, Alpha0: 1, DocLen: 40, Seed: 5, BatchRows: 64}
	var ms []*models.Model
	for _, workers := range []int{1, 3} {
		src, _ := corpus(t, cc)
		m, err := Fit(context.Background(), src, Config{K: 4, Alpha0: 1, Seed: 2, Workers: workers, Third: Explicit, EM: EM{Passes: 3, FitAlpha: true}})
		if err != nil {
			t.Fatal(err)
		}
		m.Fit.Seconds = 0
		ms = append(ms, m)
	}
	if !reflect.DeepEqual(ms[0].Topics, ms[1].Topics) || !reflect.DeepEqual(ms[0].Alpha, ms[1].Alpha) || !reflect.DeepEqual(ms[0].Fit.EM, ms[1].Fit.EM) {
		t.Error("the refined model differs between 1 and 3 workers")
	}
}

func TestMinkaAlpha(t *testing.T) {
	// For θ ~ Dir(α), E log θ_j = ψ(α_j) − ψ(α₀): the fixed point recovers α.
	want := []float64{0.1, 0.5, 2, 7}
	a0 := 0.0
	for _, a := range want {
		a0 += a
	}
	s := make([]float64, len(want))
	for j, a := range want {
		s[j] = digammaRef(a) - digammaRef(a0)
	}
	got := []float64{1, 1, 1, 1}
	minkaAlpha(got, s)
	for j := range want {
		if abs(got[j]-want[j]) > 1e-8*want[j] {
			t.Errorf("α_%d = %.10g, want %g", j, got[j], want[j])
		}
	}
}

// digammaRef is gonum's ψ, an implementation independent of the E-step's.
func digammaRef(x float64) float64 { return mathext.Digamma(x) }

// TestEMCheckpointResume stops a refining fit in its third EM pass (by
// cancelling it from the progress hook), resumes it from the checkpoints
// (the model after two passes, the third pass's statistics so far) and
// compares the model with an uninterrupted fit, bit for bit; a checkpoint
// of other EM settings is refused.
func TestEMCheckpointResume(t *testing.T) {
	cc := synth.LDAConfig{Docs: 3000, Vocab: 200, K: 4, Alpha0: 1, DocLen: 40, Seed: 17, BatchRows: 100}
	cfg := Config{K: 4, Alpha0: 1, Seed: 5, Workers: 2, Third: Explicit, EM: EM{Passes: 5, Tol: 1e-12, FitAlpha: true}}
	src, _ := corpus(t, cc)
	var emDocs int64
	cfg = resumeAfterCancel(t, src, cfg, func(p Progress) bool {
		return p.Stage == "em" && p.Pass == 5 && p.Docs >= 1500 // passes 1–2 spectral, 3–4 EM done
	}, func(p Progress) {
		if p.Stage == "em" && !p.Done {
			emDocs += 100
		}
	})
	// Two passes were saved whole, and the third after at least 1500
	// documents.
	if emDocs > 3*3000-1500 || emDocs < 2*3000 {
		t.Errorf("the resumed fit read %d documents in EM passes, want 1500 or fewer of the third and two more passes", emDocs)
	}
	cfg.EM.Eta = 0.5
	if _, err := Fit(context.Background(), src, cfg); err == nil || !strings.Contains(err.Error(), "another fit") {
		t.Errorf("EM checkpoint of η=0.01 used for η=0.5: %v", err)
	}
}

// resumeAfterCancel fits src with cfg uninterrupted and without
// checkpoints, then with checkpoints in a new directory until stop (a
// progress hook) says to cancel, then resumes (with progress hook resumed)
// and checks that the model is the uninterrupted one, bit for bit. It
// returns cfg with the checkpoints.
func resumeAfterCancel(t *testing.T, src *synth.Corpus, cfg Config, stop func(Progress) bool, resumed func(Progress)) Config {
	t.Helper()
	ref, err := Fit(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "corpus", Every: -1}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := cfg
	stopped.Progress = func(p Progress) {
		if stop(p) {
			cancel()
		}
	}
	if _, err := Fit(ctx, src, stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("fit stopped in an EM pass: %v", err)
	}
	cancel()
	again := cfg
	again.Progress = resumed
	got, err := Fit(context.Background(), src, again)
	if err != nil {
		t.Fatal(err)
	}
	ref.Fit.Seconds, got.Fit.Seconds = 0, 0
	ref.Fit.Plan, got.Fit.Plan = nil, nil
	if !reflect.DeepEqual(got.Topics, ref.Topics) || !reflect.DeepEqual(got.Alpha, ref.Alpha) || !reflect.DeepEqual(got.Fit, ref.Fit) {
		t.Error("the resumed refinement differs from an uninterrupted one")
	}
	return cfg
}

// TestStartWarningWithEM: a decomposition stopped at its iteration cap is
// a warning for the pure spectral fit, whose topics it gives, but not when
// EM passes follow and refine that start; fit.solver.converged records it
// either way.
func TestStartWarningWithEM(t *testing.T) {
	ctx := context.Background()
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 40, Seed: 9})
	for _, passes := range []int{0, 2} {
		m, err := Fit(ctx, src, Config{K: 5, Alpha0: 1, Seed: 1, Solver: "simultaneous", Iters: 1, EM: EM{Passes: passes}})
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, w := range m.Fit.Warnings {
			warned = warned || strings.Contains(w, "did not settle")
		}
		if m.Fit.Solver.Converged || warned != (passes == 0) {
			t.Errorf("EM passes %d: converged %v, warned %v (%q)", passes, m.Fit.Solver.Converged, warned, m.Fit.Warnings)
		}
	}
}

// TestSumLog checks the sum of logarithms taken through binary exponents
// and mantissa products against the plain sum, over values from
// subnormal to huge.
func TestSumLog(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 511, 512, 513, 5000} {
		v := make([]float64, n)
		want := 0.0
		for i := range v {
			v[i] = math.Exp(r.NormFloat64() * 100)
			if i%97 == 3 {
				v[i] = 3e-310 // subnormal
			}
			want += math.Log(v[i])
		}
		if got := sumLog(v); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("n=%d: sumLog %.15g, Σ log %.15g", n, got, want)
		}
	}
}

// TestTopicsMAPRelaxed checks the over-relaxed M-step's square-root form
// (Relax 1.5) against β_old^{1−r}·β^r normalised, computed with
// logarithms.
func TestTopicsMAPRelaxed(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const k, d, eta = 4, 30, 0.01
	p := TopicParams{K: k, D: d, Beta: make([]float64, k*d)}
	counts := make([]float64, k*d)
	for i := range counts {
		counts[i] = float64(r.IntN(20))
	}
	for j := range k {
		s := 0.0
		for w := range d {
			p.Beta[w*k+j] = r.Float64() + 1e-3
			s += p.Beta[w*k+j]
		}
		for w := range d {
			p.Beta[w*k+j] /= s
		}
	}
	old := append([]float64(nil), p.Beta...)
	topicsMAP(&p, counts, eta, 1.5)
	for j := range k {
		tot := float64(d) * eta
		for w := range d {
			tot += counts[w*k+j]
		}
		want, norm := make([]float64, d), 0.0
		for w := range d {
			b := (counts[w*k+j] + eta) / tot
			want[w] = math.Exp(1.5*math.Log(b) - 0.5*math.Log(old[w*k+j]))
			norm += want[w]
		}
		for w := range d {
			if got := p.Beta[w*k+j]; math.Abs(got-want[w]/norm) > 1e-13 {
				t.Fatalf("β[%d,%d] = %.16g, want %.16g", w, j, got, want[w]/norm)
			}
		}
	}
}
