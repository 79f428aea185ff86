package lda

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// TestAutoPowerPass checks the default pass policy: on a corpus whose first
// sketch barely decays past k (few short documents over a large vocabulary, one extra column)
// the default fit adds one power pass, and is then the same fit as
// PowerIters 1; where the sketch decays (TestLDAAccuracy) it keeps two.
func TestAutoPowerPass(t *testing.T) {
	cc := synth.LDAConfig{Docs: 2000, Vocab: 5000, K: 8, Alpha0: 1, DocLen: 30, Seed: 5}
	src, _ := corpus(t, cc)
	cfg, err := Config{K: 8, Alpha0: 1, Oversample: 1, Seed: 1}.withDefaults(cc.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	omega := sketchMatrix(cc.Vocab, cfg)
	p1, err := pairPass(context.Background(), src, omega, cfg, newTracker(cfg))
	if err != nil {
		t.Fatal(err)
	}
	first, err := whitening(context.Background(), p1, omega, cfg, nil, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if !(first.tail > autoPowerTail) {
		t.Fatalf("first sketch tail %.3f: the corpus must be noise-dominated for this test", first.tail)
	}
	auto, _ := fitAndEval(t, cc, Config{K: 8, Alpha0: 1, Oversample: 1, Seed: 1})
	one, _ := fitAndEval(t, cc, Config{K: 8, Alpha0: 1, Oversample: 1, Seed: 1, PowerIters: 1})
	t.Logf("first sketch tail %.3f; default fit: %d passes, tail %.3f", first.tail, auto.Fit.Passes, auto.Fit.SketchTail)
	if auto.Fit.Passes != 3 {
		t.Errorf("default fit took %d passes, want 3 (tail %.3f > %.2f)", auto.Fit.Passes, first.tail, autoPowerTail)
	}
	for i := range auto.Topics {
		if !slices.Equal(auto.Topics[i], one.Topics[i]) {
			t.Fatalf("topic %d differs between the automatic power pass and PowerIters 1", i)
		}
	}
	// A negative PowerIters forces the two passes. Without the power pass
	// this corpus is at the edge of what the checks accept (Σα̂ ≈ 5 against
	// 1, the limit of ErrTooManyTopics), so the passes are counted from the
	// progress reports and a refusal of the topics is not a failure here.
	passes := 0
	never := Config{K: 8, Alpha0: 1, Oversample: 1, Seed: 1, PowerIters: -1, Progress: func(p Progress) {
		if p.Done {
			passes++
		}
	}}
	if _, err := Fit(context.Background(), src, never); err != nil && !errors.Is(err, ErrTooManyTopics) {
		t.Fatal(err)
	}
	if passes != 2 {
		t.Errorf("PowerIters -1 took %d passes, want 2", passes)
	}
}

// TestRewhitenCountsUnsupported: a whitened second moment with two
// non-positive eigenvalues of four is a negativeError (W holds negative
// directions of M̂2, which Fit answers with a power pass over the sketch's
// range), an ErrTooManyTopics when nothing can separate them, saying how
// many.
func TestRewhitenCountsUnsupported(t *testing.T) {
	g := mat.NewSymDense(4, nil)
	for i, v := range []float64{1, 0.5, -0.02, 0} {
		g.SetSym(i, i, v)
	}
	_, _, err := rewhiten(g)
	var neg *negativeError
	if !errors.As(err, &neg) || neg.bad != 2 || !errors.Is(err, ErrTooManyTopics) || !strings.Contains(err.Error(), "2 of the k=4 eigenvalues") {
		t.Fatalf("err %v", err)
	}
	g.SetSym(2, 2, 0.1)
	g.SetSym(3, 3, 0.2)
	if _, vals, err := rewhiten(g); err != nil || len(vals) != 4 || vals[0] != 0.1 {
		t.Fatalf("positive definite: values %v, err %v", vals, err)
	}
}

// TestRangeWhitening: on a corpus whose first sketch takes a negative
// direction of M̂2 into W, the range pass's check reads WᵀM̂2W off QᵀM̂2Q
// (a k×k block, scaled) with the eigenvalues of the d×k product Wᵀ(M̂2W),
// and the whitening given QᵀM̂2Q formed by the caller is the whitening that
// forms it itself, bit for bit (the range pass and the statistics route
// give the same model).
func TestRangeWhitening(t *testing.T) {
	ctx := context.Background()
	lda, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42})
	src := headerDocs{lda, 1}
	d := src.Info().Terms
	cfg, err := Config{K: 10, Alpha0: 1, Seed: 1}.withDefaults(d)
	if err != nil {
		t.Fatal(err)
	}
	omega := sketchMatrix(d, cfg)
	p1, err := pairPass(ctx, src, omega, cfg, newTracker(cfg))
	if err != nil {
		t.Fatal(err)
	}
	b, err := whitening(ctx, p1, omega, cfg, nil, nil, true, false)
	if err != nil || b.extra == nil {
		t.Fatalf("first sketch: %v (extra %v)", err, b != nil && b.extra != nil)
	}
	q := b.rangeBasis()
	acc, err := pairPass(ctx, src, q, cfg, newTracker(cfg))
	if err != nil {
		t.Fatal(err)
	}
	coef := cfg.m2Coef()
	y1, err := m2Times(acc, coef, q, false)
	if err != nil {
		t.Fatal(err)
	}
	y2 := mat.DenseCopyOf(y1)

	// WᵀM̂2W the long way: M̂2·W from the sums, then Wᵀ(M̂2·W).
	_, k := b.w.Dims()
	mw := mat.DenseCopyOf(y1.Slice(0, d, 0, k)) // M̂2·W·D^{1/2}
	for j, v := range b.values {
		col := mw.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/math.Sqrt(v), col)
	}
	var g mat.Dense
	g.Mul(b.w.T(), mw)
	long, _, err := sketch.RitzCore(&g, 1) // eigenvalues of (g+gᵀ)/2, largest first
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(long)
	var qaq mat.Dense
	qaq.Mul(q.T(), y2)
	short, err := whitenedOnRange(&qaq, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range long {
		if math.Abs(long[i]-short[i]) > 1e-9*math.Abs(long[len(long)-1]) {
			t.Fatalf("eigenvalue %d of WᵀM̂2W: %g from the k×k block, %g from the d×k product", i, short[i], long[i])
		}
	}
	if long[0] >= 0 {
		t.Fatalf("smallest eigenvalue of WᵀM̂2W %g: the corpus must put a negative direction in W", long[0])
	}
	if neg, err := negativeOnW(&qaq, b); err != nil || !neg {
		t.Fatalf("negativeOnW = %v, %v; want true", neg, err)
	}

	self, err := whitenSketch(ctx, y1, nil, q, cfg, nil, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	given, err := whitenSketch(ctx, y2, &qaq, q, cfg, nil, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(self.w, given.w) || !slices.Equal(self.values, given.values) || self.tail != given.tail || self.negative != given.negative || self.positive != given.positive {
		t.Fatal("the whitening given QᵀM̂2Q differs from the one that forms it")
	}
	t.Logf("WᵀM̂2W eigenvalues %.3g … %.3g; range whitening: %d positive, %d rival negative", long[0], long[len(long)-1], self.positive, self.negative)
}
