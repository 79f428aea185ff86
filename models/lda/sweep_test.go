package lda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// sweepWhitening returns the basis of the largest of ks after the passes
// of FitK, and the basis Fit computes for k alone, on src.
func whiteningFor(t *testing.T, src *synth.Corpus, cfg Config) *basis {
	t.Helper()
	cfg, err := cfg.withDefaults(src.Info().Terms)
	if err != nil {
		t.Fatal(err)
	}
	track := newTracker(cfg)
	d := src.Info().Terms
	omega := sketchMatrix(d, cfg)
	p1, err := pairPass(context.Background(), src, omega, cfg, track)
	if err != nil {
		t.Fatal(err)
	}
	b, err := whitening(context.Background(), p1, omega, cfg, src, track, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// maxColDiff is the largest entry of |a_j ∓ b_j| over the columns j, each
// column's sign chosen to match (the whitening is defined up to the sign
// of each direction), relative to the largest entry of a.
func maxColDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	top, worst := 0.0, 0.0
	for j := range c {
		dot := 0.0
		for i := range r {
			dot += a.At(i, j) * b.At(i, j)
			top = max(top, math.Abs(a.At(i, j)))
		}
		s := 1.0
		if dot < 0 {
			s = -1
		}
		for i := range r {
			worst = max(worst, math.Abs(a.At(i, j)-s*b.At(i, j)))
		}
	}
	return worst / top
}

// subspaceCos is the smallest cosine of the principal angles between the
// column spans of a and b (1: the same subspace).
func subspaceCos(a, b *mat.Dense) float64 {
	qa, err := orthonormal(a)
	if err != nil {
		panic(err)
	}
	qb, err := orthonormal(b)
	if err != nil {
		panic(err)
	}
	var m mat.Dense
	m.Mul(qa.T(), qb)
	var svd mat.SVD
	if !svd.Factorize(&m, mat.SVDNone) {
		panic("svd")
	}
	v := svd.Values(nil)
	return v[len(v)-1]
}

// TestSweepWhitening: the whitening of a smaller k taken from the largest
// k's (its top columns) is the whitening computed for that k alone.
// With the exact whitening (vocabulary ≤ ExactDim) both are the top
// eigenvectors of the same M̂2, scaled by the same eigenvalues: equal up
// to the sign of each column to rounding (1e-9 of the largest entry; the
// two eigendecompositions are of the same matrix, so only LAPACK's
// rounding could tell them apart). With the randomized whitening the
// sketches differ (k+Oversample columns against the largest's), so only
// the spans are compared, loosely: the smallest cosine of their principal
// angles above 0.9 (measured, logged).
func TestSweepWhitening(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 6000, Vocab: 250, K: 8, Alpha0: 1, DocLen: 80, Seed: 5})
	big := whiteningFor(t, src, Config{K: 8, Alpha0: 1, Seed: 1})
	for _, k := range []int{3, 5} {
		alone := whiteningFor(t, src, Config{K: k, Alpha0: 1, Seed: 1})
		sub := subBasis(big, k)
		diff := maxColDiff(sub.w, alone.w)
		t.Logf("exact whitening, k=%d from k=8: max column difference %.3g", k, diff)
		if diff > 1e-9 {
			t.Errorf("k=%d: the top columns of k=8's whitening differ from k=%d's by %.3g (relative)", k, k, diff)
		}
		if !slices.Equal(sub.values, alone.values) {
			t.Errorf("k=%d: scales %v, alone %v", k, sub.values, alone.values)
		}
	}
	// Randomized whitening: the spans, against the exact top-k eigenspace.
	src, _ = corpus(t, synth.LDAConfig{Docs: 8000, Vocab: 1000, K: 8, Alpha0: 1, DocLen: 100, Seed: 6})
	cfg := Config{K: 8, Alpha0: 1, Seed: 1}
	big = whiteningFor(t, src, cfg)
	exact := whiteningFor(t, src, Config{K: 8, Alpha0: 1, Seed: 1, ExactDim: 1000})
	cfg, _ = cfg.withDefaults(1000)
	acc, err := triplePass(context.Background(), src, big.w, implicit.DocSample{}, false, cfg, newTracker(cfg))
	if err != nil {
		t.Fatal(err)
	}
	mom, err := acc.Moments(big.w, 1)
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{3, 5, 7}
	_, bases := sweepBlocks(mom, big, cfg, ks)
	t.Logf("eigenvalues of M̂2: %.4g", exact.values)
	for i, k := range ks {
		alone := whiteningFor(t, src, Config{K: k, Alpha0: 1, Seed: 1})
		ex := subBasis(exact, k).w
		cs, ca, cl := subspaceCos(bases[i].w, ex), subspaceCos(alone.w, ex), subspaceCos(subBasis(big, k).w, ex)
		t.Logf("randomized whitening, k=%d: smallest principal cosine to the exact span %.6f from k=8 (Ritz), %.6f alone, %.6f from k=8's top columns", k, cs, ca, cl)
		if cs < 0.99 {
			t.Errorf("k=%d: the sweep's whitening spans the top-%d eigenspace at a smallest principal cosine of %.4f, want ≥ 0.99", k, k, cs)
		}
		// (W R_k)ᵀM̂2(W R_k) = I as the pass measures M̂2.
		g := whitenedM2(rotatedWhitened(mom, mustRitz(t, mom, big, cfg).Slice(0, 8, 0, k).(*mat.Dense)), cfg.m2Coef())
		for a := range k {
			for c := range k {
				want := 0.0
				if a == c {
					want = 1
				}
				if math.Abs(g.At(a, c)-want) > 1e-9 {
					t.Fatalf("k=%d: the Ritz whitening's WᵀM̂2W[%d,%d] = %g", k, a, c, g.At(a, c))
				}
			}
		}
	}
}

func mustRitz(t *testing.T, mom *implicit.Whitened, b *basis, cfg Config) *mat.Dense {
	r, _, ok := ritzRotation(mom, b, cfg.m2Coef())
	if !ok {
		t.Fatal("Ritz rotation failed")
	}
	return r
}

// TestSweepSpectralMatchesFit: with the exact whitening, the spectral
// model of a smaller k from the largest k's passes is Fit's for that k
// alone, up to the float32 rounding of the third moment's sums (which
// depends on k through the blocking of its products): every topic within
// 1e-4 in ℓ1 and every weight within 1e-4 relatively, after matching.
func TestSweepSpectralMatchesFit(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 6000, Vocab: 250, K: 8, Alpha0: 1, DocLen: 80, Seed: 5})
	cfg := Config{Alpha0: 1, Seed: 1}
	sw, err := FitK(context.Background(), src, []int{3, 5, 8}, cfg, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []int{3, 5, 8} {
		if !sw.Scores[i].SharedStart {
			t.Errorf("k=%d: not from the shared passes", k)
		}
		c := cfg
		c.K = k
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		l1, da := topicGap(sw.Models[i], m)
		t.Logf("k=%d: max topic ℓ1 %.3g, max weight difference %.3g", k, l1, da)
		if l1 > 1e-4 || da > 1e-4 {
			t.Errorf("k=%d: the sweep's spectral model differs from Fit's: topic ℓ1 %.3g, weight %.3g", k, l1, da)
		}
	}
	if sw.Passes != 2 {
		t.Errorf("%d passes for three spectral fits, want 2", sw.Passes)
	}
}

// topicGap matches b's topics to a's (greedily, by ℓ1) and returns the
// largest ℓ1 distance and relative weight difference of matched pairs.
func topicGap(a, b *models.Model) (l1, dalpha float64) {
	used := make([]bool, b.K)
	for i, ta := range a.Topics {
		best, bj := math.Inf(1), -1
		for j, tb := range b.Topics {
			if used[j] {
				continue
			}
			s := 0.0
			for w := range ta {
				s += math.Abs(ta[w] - tb[w])
			}
			if s < best {
				best, bj = s, j
			}
		}
		used[bj] = true
		l1 = max(l1, best)
		dalpha = max(dalpha, math.Abs(a.Alpha[i]-b.Alpha[bj])/math.Abs(b.Alpha[bj]))
	}
	return l1, dalpha
}

// TestSweepSharedEM: the shared EM passes give every model what its own
// EM passes (RefineEM) give from the same start, bit for bit, whatever
// the workers.
func TestSweepSharedEM(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 60, Seed: 7})
	ks := []int{3, 5, 8}
	spec := Config{Alpha0: 1, Seed: 1, Workers: 2}
	starts, err := FitK(context.Background(), src, ks, spec, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(0)
	cfg.Workers = 2
	cfg.EM.Passes = 4
	var ms []*models.Model
	for _, m := range starts.Models {
		ms = append(ms, cloneModel(m))
	}
	shared, err := refineAll(context.Background(), src, ms, cfg, newTracker(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range starts.Models {
		if !shared[i] {
			t.Fatalf("k=%d did not share the passes", m.K)
		}
		own := cloneModel(m)
		if err := RefineEM(context.Background(), src, own, cfg); err != nil {
			t.Fatal(err)
		}
		if a, b := modelBytes(t, ms[i]), modelBytes(t, own); !bytes.Equal(a, b) {
			t.Errorf("k=%d: the shared EM passes differ from its own", m.K)
		}
		t.Logf("k=%d: %d EM passes, bounds %v", m.K, ms[i].Fit.EM.Passes, ms[i].Fit.EM.Bounds)
	}
}

// modelBytes is what the comparisons compare: the topics, weights and EM
// record, encoded.
func modelBytes(t *testing.T, m *models.Model) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		Alpha  []float64
		Topics [][]float64
		EM     *models.EMStats
	}{m.Alpha, m.Topics, m.Fit.EM})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSweepWorkers: the same models and scores with 1 and 3 workers.
func TestSweepWorkers(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 500, K: 4, Alpha0: 1, DocLen: 60, Seed: 8})
	var out [][]byte
	for _, w := range []int{1, 3} {
		cfg := DefaultConfig(0)
		cfg.Workers = w
		sw, err := FitK(context.Background(), src, []int{2, 4, 6}, cfg, SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		for _, m := range sw.Models {
			buf.Write(modelBytes(t, m))
		}
		sc := slices.Clone(sw.Scores)
		js, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(js)
		out = append(out, buf.Bytes())
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("FitK with 1 and 3 workers differ")
	}
}

// TestSweepRecommends: on a corpus drawn from LDA with 5 topics, the sweep
// over 3, 5 and 8 recommends 5: 3 topics cannot fit it, and 8 fit it no
// better than 5 on held-out documents (the rule takes the smallest within
// 1% of the best). The vocabulary is whitened by a sketch, so the smaller
// k take spectral passes of their own; the EM passes are shared.
func TestSweepRecommends(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 10000, Vocab: 1000, K: 5, Alpha0: 1, DocLen: 80, Seed: 9})
	sw, err := FitK(context.Background(), src, []int{3, 5, 8}, DefaultConfig(0), SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sw.Scores {
		t.Logf("k=%d perplexity %.4f UMass %.3f NPMI %.3f diversity %.2f EM passes %d", s.K, s.Perplexity, s.UMass, s.NPMI, s.Diversity, s.EMPasses)
		if s.SharedStart != (s.K == 8) || !s.EMShared {
			t.Errorf("k=%d: shared start %v, shared EM %v; want %v, true", s.K, s.SharedStart, s.EMShared, s.K == 8)
		}
	}
	t.Logf("recommended %d: %s; %d passes, %.2fs", sw.Recommended, sw.Rule, sw.Passes, sw.Seconds)
	if sw.Recommended != 5 {
		t.Errorf("recommended k=%d, want 5", sw.Recommended)
	}
	if sw.HeldOut != "every 10th" || sw.Scores[0].HeldOut.Docs+sw.Scores[0].HeldOut.Skipped != 1000 {
		t.Errorf("held out %q, %d documents; want every 10th, 1000", sw.HeldOut, sw.Scores[0].HeldOut.Docs)
	}
}

// TestRecommend: the rule on its own.
func TestRecommend(t *testing.T) {
	for _, c := range []struct {
		perp []float64
		want int
	}{
		{[]float64{120, 100, 99.5}, 20},
		{[]float64{120, 100, 98}, 50},
		{[]float64{100, 101, 102}, 10},
	} {
		var s []KScore
		for i, p := range c.perp {
			s = append(s, KScore{K: []int{10, 20, 50}[i], Perplexity: p})
		}
		if k, _ := recommend(s, 0.01); k != c.want {
			t.Errorf("%v: %d, want %d", c.perp, k, c.want)
		}
	}
}

// TestSweepRandomizedAccuracy: with the randomized whitening a smaller
// k's spectral start from the largest k's passes is not Fit's for k alone
// (another sketch); on a corpus drawn from 5 topics the sweep over 5 and
// 12 must recover the 5 as well as Fit(5) does: all found, mean ℓ1 to
// the truth at most 0.02 above Fit's.
func TestSweepRandomizedAccuracy(t *testing.T) {
	src, truth := corpus(t, synth.LDAConfig{Docs: 10000, Vocab: 1500, K: 5, Alpha0: 1, DocLen: 100, Seed: 11})
	cfg := Config{Alpha0: 1, Seed: 1}
	sw, err := FitK(context.Background(), src, []int{5, 12}, cfg, SweepOptions{NoScore: true, SharedStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Scores[0].SharedStart {
		t.Fatal("k=5 did not come from the shared passes")
	}
	cfg.K = 5
	alone, err := Fit(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	es, err := models.Evaluate(sw.Models[0], truth)
	if err != nil {
		t.Fatal(err)
	}
	ea, err := models.Evaluate(alone, truth)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("k=5 against the truth: from k=12's passes mean ℓ1 %.4f (max %.4f, %d found), alone %.4f (max %.4f, %d found)",
		es.MeanL1, es.MaxL1, es.Found, ea.MeanL1, ea.MaxL1, ea.Found)
	if es.Found != 5 || es.MeanL1 > ea.MeanL1+0.02 {
		t.Errorf("from k=12's passes: %d found, mean ℓ1 %.4f; alone %.4f", es.Found, es.MeanL1, ea.MeanL1)
	}
}

// TestSweepIsFit: with the randomized whitening, the sweep's default gives
// every smaller k the spectral passes Fit takes for it, and its EM passes
// are exact sums shared with the other k: every model of the sweep is the
// default Fit's for that k, bit for bit, whatever the workers. With
// SharedStart the smaller k start from the largest k's passes instead, in
// fewer passes, and their models differ from Fit's.
func TestSweepIsFit(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 900, K: 5, Alpha0: 1, DocLen: 60, Seed: 12})
	ks := []int{3, 5, 8}
	cfg := DefaultConfig(0)
	cfg.EM.Passes = 3
	var passes int
	for _, w := range []int{1, 2} {
		cfg.Workers = w
		sw, err := FitK(context.Background(), src, ks, cfg, SweepOptions{NoScore: true})
		if err != nil {
			t.Fatal(err)
		}
		passes = sw.Passes
		for i, k := range ks {
			if got := sw.Scores[i].SharedStart; got != (k == 8) {
				t.Errorf("k=%d: shared start %v", k, got)
			}
			c := cfg
			c.K = k
			m, err := Fit(context.Background(), src, c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(modelBytes(t, sw.Models[i]), modelBytes(t, m)) {
				t.Errorf("%d workers, k=%d: the sweep's model differs from Fit's", w, k)
			}
		}
	}
	// Starts of their own need no shared moments: any representation of
	// the third moment serves, as Fit's; a shared start needs it explicit.
	rows := cfg
	rows.Third, rows.RowDir = Rows, t.TempDir()
	sw, err := FitK(context.Background(), src, ks[:2], rows, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks[:2] {
		c := rows
		c.K = k
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		if sw.Models[i].Fit.Solver.Name != m.Fit.Solver.Name || !bytes.Equal(modelBytes(t, sw.Models[i]), modelBytes(t, m)) {
			t.Errorf("Third=%s, k=%d: the sweep's model differs from Fit's", Rows, k)
		}
	}
	if _, err := FitK(context.Background(), src, ks, rows, SweepOptions{NoScore: true, SharedStart: true}); err == nil {
		t.Errorf("SharedStart with Third=%s: no error", Rows)
	}
	shared, err := FitK(context.Background(), src, ks, cfg, SweepOptions{NoScore: true, SharedStart: true})
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, k := range ks {
		if !shared.Scores[i].SharedStart {
			t.Errorf("SharedStart: k=%d took passes of its own", k)
		}
		c := cfg
		c.K = k
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, shared.Models[i]), modelBytes(t, m)) {
			differ++
		}
	}
	t.Logf("own starts %d passes, shared %d; %d shared-start models differ from Fit's", passes, shared.Passes, differ)
	if shared.Passes >= passes || differ != len(ks)-1 {
		t.Errorf("SharedStart: %d passes (own starts %d), %d models differ from Fit's; want fewer passes and %d", shared.Passes, passes, differ, len(ks)-1)
	}
}

// TestSweepSampledEM: models whose EM passes start on a sample of the
// documents take refine's passes one after another, with the same result
// as RefineEM's.
func TestSweepSampledEM(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 60, Seed: 7})
	starts, err := FitK(context.Background(), src, []int{3, 6}, Config{Alpha0: 1, Seed: 1}, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(0)
	cfg.EM.Passes, cfg.EM.Sample = 4, 50000
	var ms []*models.Model
	for _, m := range starts.Models {
		ms = append(ms, cloneModel(m))
	}
	shared, err := refineAll(context.Background(), src, ms, cfg, newTracker(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range starts.Models {
		if shared[i] {
			t.Errorf("k=%d: a sampled model's EM passes were shared", m.K)
		}
		own := cloneModel(m)
		if err := RefineEM(context.Background(), src, own, cfg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, ms[i]), modelBytes(t, own)) {
			t.Errorf("k=%d: the sweep's EM passes differ from RefineEM's", m.K)
		}
		if ms[i].Fit.EM.Sample == nil {
			t.Errorf("k=%d: no sample", m.K)
		}
	}
}

// TestSweepFewerTopics: documents without topic structure (as
// TestFewerTopics') refuse the spectral fit of the largest k; FitK answers
// every k as Fit does — the largest by the topics the data support, split,
// the k below them from those passes, the others by passes of their own —
// and with the exact whitening and exact EM sums each model is Fit's bit
// for bit.
func TestSweepFewerTopics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d = 30
	b := &stream.Docs{Offsets: []int{0}}
	for range 20000 {
		cnt := map[int32]int32{}
		for range 8 {
			cnt[int32(float64(d)*r.Float64()*r.Float64())]++
		}
		for w := int32(0); w < d; w++ {
			if c := cnt[w]; c > 0 {
				b.Add(w, c)
			}
		}
		b.EndDoc()
	}
	src := &stream.MemoryDocs{All: b, Terms: d, BatchRows: 1000}
	cfg := Config{Alpha0: 1, Seed: 1, Workers: 2, EM: EM{Passes: 3, FitAlpha: true}}
	ks := []int{2, 6, 20, 25}
	sw, err := FitK(context.Background(), src, ks, cfg, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks {
		c := cfg
		c.K = k
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("k=%d: shared start %v; Fit's warnings %q", k, sw.Scores[i].SharedStart, m.Fit.Warnings)
		// The data support 16 spectral topics: 20 is above them.
		if want := k != 20; sw.Scores[i].SharedStart != want {
			t.Errorf("k=%d: shared start %v, want %v", k, sw.Scores[i].SharedStart, want)
		}
		if !bytes.Equal(modelBytes(t, sw.Models[i]), modelBytes(t, m)) {
			t.Errorf("k=%d: FitK's model differs from Fit's", k)
		}
	}
}

// TestSweepCancel: cancelled during the shared EM passes, FitK returns
// the context's error (every pass of the tee ends; nothing waits).
func TestSweepCancel(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 60, Seed: 7, BatchRows: 200})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := DefaultConfig(0)
	cfg.Progress = func(p Progress) {
		if p.Stage == "em" && p.Docs >= 1000 {
			cancel()
		}
	}
	if _, err := FitK(ctx, src, []int{3, 5, 8}, cfg, SweepOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled FitK: %v", err)
	}
}

// TestTeePassError: a pass of the tee that fails ends the others and the
// reader, and its error is returned.
func TestTeePassError(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 100, K: 3, Alpha0: 1, DocLen: 20, Seed: 3, BatchRows: 100})
	boom := errors.New("boom")
	seen := make([]int, 3)
	err := teePass(context.Background(), src.Docs, 3, func(ctx context.Context, i int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error {
		for b, err := range batches(ctx) {
			if err != nil {
				return err
			}
			seen[i] += b.Len()
			if i == 1 && seen[i] >= 500 {
				return boom
			}
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("teePass: %v, want the failing pass's error", err)
	}
	// Without a failure every pass sees every document.
	clear(seen)
	if err := teePass(context.Background(), src.Docs, 3, func(ctx context.Context, i int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error {
		for b, err := range batches(ctx) {
			if err != nil {
				return err
			}
			seen[i] += b.Len()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if seen[0] != 3000 || seen[1] != 3000 || seen[2] != 3000 {
		t.Errorf("documents seen %v, want 3000 each", seen)
	}
}
