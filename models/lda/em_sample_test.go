package lda

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// sampledCorpus is a corpus of about 360,000 tokens drawn from 8 topics,
// and the settings of a default fit of 4 topics whose EM passes sample it
// (60,000 tokens: a sixth). The model departs from the data, as on real
// text, so EM moves the spectral start far and the sample's passes make
// most of that move.
func sampledCorpus() (synth.LDAConfig, Config) {
	return synth.LDAConfig{Docs: 6000, Vocab: 300, K: 8, Alpha0: 1, DocLen: 60, Seed: 8, BatchRows: 200},
		Config{K: 4, Alpha0: 1, Seed: 3, Workers: 2, Third: Explicit, EM: EM{Passes: 10, FitAlpha: true, Sample: 60000}}
}

// trainingBound is the bound per token of m's parameters over src.
func trainingBound(t *testing.T, src stream.DocSource, m *models.Model) float64 {
	t.Helper()
	st, err := emStateOf(m, EM{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	b, tokens, err := EMBound(context.Background(), src.Docs, 2, &st.params)
	if err != nil {
		t.Fatal(err)
	}
	return b / float64(tokens)
}

// TestEMSample checks the EM passes of a sampled corpus: passes on the
// sample, then one over every document; the model the same bits whatever
// the workers; a refinement as good as EM over every document (the
// corpus's bound); and a sample that holds the whole corpus (in memory)
// giving the model of passes that read the source, bit for bit.
func TestEMSample(t *testing.T) {
	cc, cfg := sampledCorpus()
	cfg.EM.FullGain = -1 // the pass over every document whatever the sample's learning curve
	var ref *models.Model
	for _, workers := range []int{1, 3} {
		src, _ := corpus(t, cc)
		c := cfg
		c.Workers = workers
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		m.Fit.Seconds = 0
		s := m.Fit.EM.Sample
		if s == nil || s.Passes < 2 || s.Undone || m.Fit.EM.Passes != s.Passes+1 || s.Rate < 0.1 || s.Rate > 0.25 {
			t.Fatalf("%d workers: EM record %+v, sample %+v: want passes on a sixth of the documents, then one over all", workers, m.Fit.EM, s)
		}
		if len(s.HeldOut) != s.Passes {
			t.Errorf("%d workers: %d held-out bounds for %d passes on the sample", workers, len(s.HeldOut), s.Passes)
		}
		if ref != nil {
			if !reflect.DeepEqual(m.Topics, ref.Topics) || !reflect.DeepEqual(m.Alpha, ref.Alpha) || !reflect.DeepEqual(m.Fit, ref.Fit) {
				t.Errorf("the sampled refinement differs between 1 and %d workers", workers)
			}
			continue
		}
		ref = m
		full := cfg
		full.EM.Sample = -1
		mf, err := Fit(context.Background(), src, full)
		if err != nil {
			t.Fatal(err)
		}
		start := trainingBound(t, src, m0(t, src, cfg))
		got, want := trainingBound(t, src, m), trainingBound(t, src, mf)
		t.Logf("bound per token: spectral start %.5f; %d passes on the sample (held-out %.5v) and one over all %.5f; %d passes over all %.5f",
			start, s.Passes, s.HeldOut, got, mf.Fit.EM.Passes, want)
		if got < want-0.2*(want-start) {
			t.Errorf("sampled EM reached %.5f, EM over every document %.5f, from %.5f", got, want, start)
		}
	}

	// Sample ≥ the corpus: the passes read the copy in memory, and give
	// the model of passes over the source.
	src, _ := corpus(t, cc)
	mem, disk := cfg, cfg
	mem.EM.Sample, disk.EM.Sample = 1<<30, -1
	a, err := Fit(context.Background(), src, mem)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(context.Background(), src, disk)
	if err != nil {
		t.Fatal(err)
	}
	a.Fit.Seconds, b.Fit.Seconds = 0, 0
	if a.Fit.EM.Sample != nil || !reflect.DeepEqual(a, b) {
		t.Error("EM passes from the documents kept in memory differ from passes over the source")
	}
}

// TestEMSampleHalf checks the passes on the sample's first half: they come
// first, each but the last raising the bound by at least the stopping
// tolerance and the last by less (or they stop at half of the sample's
// passes, rounded up); the held-out bound rises over them; the passes on
// the whole sample follow; and a tolerance no pass meets leaves the half
// exactly half of the sample's passes.
func TestEMSampleHalf(t *testing.T) {
	cc, cfg := sampledCorpus()
	src, _ := corpus(t, cc)
	for _, tol := range []float64{0, 1e-12} {
		c := cfg
		c.EM.Tol = tol
		em := c.EM.withDefaults()
		m, err := Fit(context.Background(), src, c)
		if err != nil {
			t.Fatal(err)
		}
		s, b := m.Fit.EM.Sample, m.Fit.EM.Bounds
		if s == nil {
			t.Fatalf("tol %g: no sample", tol)
		}
		h, cap := s.HalfPasses, (em.Passes-em.FullPasses+1)/2
		t.Logf("tol %g: %d passes on the half, %d on the whole sample; bounds %.5v; held-out %.5v", tol, h, s.Passes-h, b, s.HeldOut)
		if h < 1 || h > cap || s.Passes <= h || len(b) < s.Passes {
			t.Fatalf("tol %g: %d passes on the half of %d on the sample (cap %d): want passes on the half, then on the whole sample", tol, h, s.Passes, cap)
		}
		if tol > 0 && tol < 1e-9 && h != cap {
			t.Errorf("tol %g: %d passes on the half, want the cap %d", tol, h, cap)
		}
		for i := 1; i < h; i++ {
			rel := (b[i] - b[i-1]) / math.Abs(b[i-1])
			if last := i == h-1; last && h < cap && !(rel < em.Tol) || !last && rel < em.Tol && rel >= 0 {
				t.Errorf("tol %g: the half's pass %d raised the bound by %.3g (tolerance %g) and the half's passes ended after %d", tol, i+1, rel, em.Tol, h)
			}
		}
		if !(s.HeldOut[h] > s.HeldOut[0]) {
			t.Errorf("tol %g: held-out bound %.5f after the half's passes, %.5f before", tol, s.HeldOut[h], s.HeldOut[0])
		}
	}
}

// TestEMFullGain checks the sample's learning curve, which decides whether
// the passes over every document run, on corpora whose topics the model
// cannot hold (drawn from 8, fitted with 4, as real text departs from LDA).
// A sample of 50 tokens per topic-word parameter predicts a gain below the
// sample's tolerance: the passes end on the sample, and the pass over
// every document they skip would have raised the corpus's bound by less
// than that tolerance too. A sample of 12 tokens per parameter predicts
// more: the pass runs, and it raises the corpus's bound by more than the
// threshold. Either way the model is the same whatever the workers.
func TestEMFullGain(t *testing.T) {
	fewer := synth.LDAConfig{Docs: 6000, Vocab: 600, K: 8, Alpha0: 1, DocLen: 60, Seed: 8, BatchRows: 200}
	for _, c := range []struct {
		name string
		cc   synth.LDAConfig
		cfg  Config
		skip bool
	}{
		{"50 tokens a parameter", func() synth.LDAConfig { cc, _ := sampledCorpus(); return cc }(), func() Config { _, cfg := sampledCorpus(); return cfg }(), true},
		{"12 tokens a parameter", fewer, Config{K: 4, Alpha0: 1, Seed: 3, Workers: 2, Third: Explicit, EM: EM{Passes: 10, FitAlpha: true, Sample: 30000}}, false},
	} {
		src, _ := corpus(t, c.cc)
		m, err := Fit(context.Background(), src, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		always := c.cfg
		always.EM.FullGain = -1
		mf, err := Fit(context.Background(), src, always)
		if err != nil {
			t.Fatal(err)
		}
		em := c.cfg.EM.withDefaults()
		s := m.Fit.EM.Sample
		if s == nil || s.FullGain == nil || mf.Fit.EM.Sample.FullGain != nil {
			t.Fatalf("%s: sample %+v: want the learning curve measured (and not with FullGain < 0)", c.name, s)
		}
		ms := m
		if !c.skip {
			// The sample's model alone, for the gain the pass brought.
			none := c.cfg
			none.EM.FullPasses = -1
			if ms, err = Fit(context.Background(), src, none); err != nil {
				t.Fatal(err)
			}
		}
		b, bf := trainingBound(t, src, ms), trainingBound(t, src, mf)
		gain := (bf - b) / -b
		t.Logf("%s: rate %.3f, %d passes on the sample, predicted gain %.3g, the pass over every document's %.3g", c.name, s.Rate, s.Passes, *s.FullGain, gain)
		one := c.cfg
		one.Workers = 1
		m1, err := Fit(context.Background(), src, one)
		if err != nil {
			t.Fatal(err)
		}
		m1.Fit.Seconds, m.Fit.Seconds = 0, 0
		if !reflect.DeepEqual(m1, m) {
			t.Errorf("%s: the model differs between 1 and %d workers", c.name, c.cfg.Workers)
		}
		skipped := m.Fit.EM.Passes == s.Passes
		switch {
		case skipped != c.skip:
			t.Errorf("%s: %d passes, %d on the sample: want the pass over every document skipped=%t", c.name, m.Fit.EM.Passes, s.Passes, c.skip)
		case c.skip && (*s.FullGain >= em.SampleTol || gain >= em.SampleTol):
			t.Errorf("%s: predicted gain %.3g, the skipped pass's %.3g: want both below %g", c.name, *s.FullGain, gain, em.SampleTol)
		case !c.skip && (*s.FullGain < em.SampleTol || gain < em.SampleTol):
			t.Errorf("%s: predicted gain %.3g, the pass's %.3g: want both at least %g", c.name, *s.FullGain, gain, em.SampleTol)
		}
	}
}

// TestEMHalves checks that the two halves of the sample in memory give the
// whole sample's statistics bit for bit.
func TestEMHalves(t *testing.T) {
	cc, cfg := sampledCorpus()
	src, _ := corpus(t, cc)
	m := m0(t, src, cfg)
	em := cfg.EM.withDefaults()
	st := startState(m, em)
	docs := newEMDocs(src, em, st)
	ctx := context.Background()
	whole := NewEMAcc(m.D, m.K)
	if err := whole.Pass(ctx, docs.pass(true), 2, &st.params, nil); err != nil {
		t.Fatal(err)
	}
	if docs.half(0) == nil {
		t.Fatal("the sample is not in memory after a pass over it")
	}
	a, b := NewEMAcc(m.D, m.K), NewEMAcc(m.D, m.K)
	if err := a.Pass(ctx, docs.half(0), 3, &st.params, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Pass(ctx, docs.half(1), 1, &st.params, nil); err != nil {
		t.Fatal(err)
	}
	if a.Tokens == 0 || b.Tokens == 0 {
		t.Fatalf("halves of %d and %d tokens", a.Tokens, b.Tokens)
	}
	if err := b.Merge(a); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.N, whole.N) || !reflect.DeepEqual(b.Suff, whole.Suff) || b.Bound != whole.Bound || b.Tokens != whole.Tokens {
		t.Error("the halves' statistics differ from the whole sample's")
	}
}

// m0 is the spectral fit of src under cfg, as EM's start (no EM passes).
func m0(t *testing.T, src stream.DocSource, cfg Config) *models.Model {
	t.Helper()
	cfg.EM = EM{}
	m, err := Fit(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := startState(m, cfg.EM.withDefaults())
	st.store(m, cfg.EM.withDefaults(), false)
	m.Fit.EM.Passes = 1 // read back as parameters between passes
	return m
}

// TestEMSampleUndo draws samples from a corpus whose spectral start is
// already accurate (drawn from LDA itself), so that an M-step on the
// sample lowers the held-out sample's bound and is undone. From a sample
// far too small for the topics (a few dozen documents) it lowers it by
// more than the tolerance: the whole sample's passes follow (the first
// were on its first half), its first M-step is undone too, and the passes
// over every document then follow the ordinary stopping rule from EM's
// start, as a fit without a sample does, bit for bit. From a larger one (a
// fortieth of the corpus) by less: EM's start holds, and the refinement
// ends there.
func TestEMSampleUndo(t *testing.T) {
	cc := synth.LDAConfig{Docs: 20000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 60, Seed: 9, BatchRows: 500}
	cfg := Config{K: 5, Alpha0: 1, Seed: 4, Workers: 2, Third: Explicit, EM: EM{Passes: 10, FitAlpha: true, Sample: 3000}}
	full := cfg
	full.EM.Sample = -1
	mf, evf := fitAndEval(t, cc, full)
	for _, c := range []struct {
		sample int64
		holds  bool
	}{{3000, false}, {30000, true}} {
		cfg.EM.Sample = c.sample
		m, ev := fitAndEval(t, cc, cfg)
		s := m.Fit.EM.Sample
		if s == nil || !s.Undone || s.Passes != map[bool]int{true: 2, false: 4}[c.holds] || s.HalfPasses != 2 {
			t.Fatalf("sample of %d tokens: %+v: the first M-step on its half (and, too small, on the whole sample) was not undone", c.sample, s)
		}
		fall := (s.HeldOut[0] - s.HeldOut[1]) / -s.HeldOut[0]
		t.Logf("sample of %d tokens: held-out bound fell by %.3g; %d passes, mean ℓ1 %.4f; EM over every document %.4f", c.sample, fall, m.Fit.EM.Passes, ev.MeanL1, evf.MeanL1)
		if !(fall > 0) {
			t.Errorf("sample of %d tokens: undone after held-out bounds %v, which did not fall", c.sample, s.HeldOut)
		}
		if ev.MeanL1 > evf.MeanL1*1.25+0.005 {
			t.Errorf("sample of %d tokens: mean ℓ1 %.4f; EM over every document %.4f", c.sample, ev.MeanL1, evf.MeanL1)
		}
		if c.holds {
			// EM's start, smoothed as an M-step smooths, is the model: as
			// close to the truth as EM over every document gets.
			if ev.MeanL1 > evf.MeanL1*1.1+0.001 {
				t.Errorf("sample of %d tokens: EM's start held at mean ℓ1 %.4f; EM over every document %.4f", c.sample, ev.MeanL1, evf.MeanL1)
			}
			if fall >= cfg.EM.withDefaults().Tol || m.Fit.EM.Passes != 2 || !m.Fit.EM.Converged {
				t.Errorf("sample of %d tokens: held-out fall %.3g, %d passes: want EM's start to hold", c.sample, fall, m.Fit.EM.Passes)
			}
			continue
		}
		got, want := m.Fit.EM.Bounds[s.Passes:], mf.Fit.EM.Bounds
		if fall < cfg.EM.withDefaults().Tol || len(got) < 2 || got[0] != want[0] {
			t.Errorf("sample of %d tokens: held-out fall %.3g; after it bounds %v, a fit without a sample %v", c.sample, fall, got, want)
		}
	}
}

// TestEMSampleCheckpointResume stops a sampled refinement in its first pass
// on the whole sample (after two on its first half) and resumes it from the
// checkpoints: the model is the uninterrupted one, bit for bit.
func TestEMSampleCheckpointResume(t *testing.T) {
	cc, cfg := sampledCorpus()
	cfg.EM.Tol = 1e-12 // passes on the sample until the cap leaves one
	cfg.EM.Passes = 4
	src, _ := corpus(t, cc)
	resumeAfterCancel(t, src, cfg, func(p Progress) bool {
		return p.Stage == "em-sample" && p.Pass == 5 && p.Docs >= 400
	}, nil)
}

// TestCubeSample checks the third moment with its cubes over a sample of
// the documents: Fit equals the statistics route (phases 1 and 2, then
// FitStats) bit for bit before EM, does not depend on workers, and
// recovers the topics nearly as well as the cubes of every document.
func TestCubeSample(t *testing.T) {
	cc := synth.LDAConfig{Docs: 20000, Vocab: 500, K: 5, Alpha0: 1, DocLen: 60, Seed: 31, BatchRows: 1000}
	cfg := Config{K: 5, Alpha0: 1, Seed: 2, Workers: 2, Third: Explicit, CubeSample: 400000}
	all, _, _, truth := shards(t, cc, 0.5)
	fit, err := Fit(context.Background(), all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := twoPhase(t, cfg, all)
	if s := st.Triple.Cubes; s.All() || s.Rate < 0.2 || s.Rate > 0.5 {
		t.Fatalf("phase-2 statistics with cubes over %+v, want a third of the documents", s)
	}
	if d := relDiff(t, fitStats(t, st, cfg), fit); d != 0 {
		t.Errorf("the statistics route differs from Fit by %.3g with sampled cubes", d)
	}
	one := cfg
	one.Workers = 1
	m1, err := Fit(context.Background(), all, one)
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(t, m1, fit); d != 0 {
		t.Errorf("sampled cubes: 1 and 2 workers differ by %.3g", d)
	}
	every := cfg
	every.CubeSample = -1
	mAll, err := Fit(context.Background(), all, every)
	if err != nil {
		t.Fatal(err)
	}
	if mAll.Fit.CubeSample != nil {
		t.Errorf("every document's cubes recorded as a sample: %+v", mAll.Fit.CubeSample)
	}
	// On data drawn from LDA the model leaves nothing but noise, so the
	// sample's error is not small against the residual: the fit says so.
	cs := fit.Fit.CubeSample
	res := fit.Fit.Solver.Residual
	if cs == nil || cs.Rate != st.Triple.Cubes.Rate || !(cs.StdErr > 0) || res == nil {
		t.Fatalf("cube sample recorded as %+v (residual %v), want rate %g and its error", cs, res, st.Triple.Cubes.Rate)
	}
	warned := strings.Contains(strings.Join(fit.Fit.Warnings, "; "), "misfit")
	t.Logf("cube sample's error %.4g, residual %.4g (every document's %.4g), warned %v", cs.StdErr, *res, *mAll.Fit.Solver.Residual, warned)
	if warned != (cs.StdErr > cubeWarnShare**res) || !warned {
		t.Errorf("error %.4g against residual %.4g: warned %v (%q)", cs.StdErr, *res, warned, fit.Fit.Warnings)
	}
	ev, _ := models.Evaluate(fit, truth)
	evAll, _ := models.Evaluate(mAll, truth)
	t.Logf("mean ℓ1: cubes of a sample %.4f, of every document %.4f", ev.MeanL1, evAll.MeanL1)
	if ev.Found != cc.K || ev.MeanL1 > 2*evAll.MeanL1+0.02 {
		t.Errorf("cubes of a sample: mean ℓ1 %.4f, found %d; of every document %.4f", ev.MeanL1, ev.Found, evAll.MeanL1)
	}
}

// TestEMSampleSize checks the default sample: 2^22 tokens, or 4 tokens per
// topic-word parameter where that is more; a given size; none.
func TestEMSampleSize(t *testing.T) {
	for _, c := range []struct {
		sample int64
		d, k   int
		want   int64
	}{
		{0, 10000, 50, DefaultSample},
		{0, 54888, 100, 4 * 54888 * 100},
		{1000, 54888, 100, 1000},
		{-1, 10000, 50, -1},
		{-7, 10000, 50, -1},
	} {
		if got := (EM{Sample: c.sample}).sampleTokens(c.d, c.k); got != c.want {
			t.Errorf("Sample %d, d=%d, k=%d: %d tokens, want %d", c.sample, c.d, c.k, got, c.want)
		}
	}
	if r := emSampleRate(EM{}, 54888, 100, 9168689); r != 1 {
		t.Errorf("the Go source tree at k=100 sampled at %g: its 9.2 million tokens are fewer than 4 per parameter", r)
	}
}

// TestWarmStarts checks the sample's warm starts: a pass whose E-steps
// start where the last pass's ended, under parameters an M-step has moved
// since, takes fewer fixed-point iterations than cold starts, reaches the
// same fixed points (to the E-step's tolerance: nearly the same expected
// counts, a bound no lower), and gives the same bytes with 1 and 3 workers.
func TestWarmStarts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const k, d, n = 6, 80, 400
	p := randomParams(r, k, d, false)
	all := stream.NewDocs(0)
	for range n {
		// A document of two topics, as text mostly is.
		a, b := r.IntN(k), r.IntN(k)
		for _, w := range r.Perm(d)[:10+r.IntN(20)] {
			j := a
			if r.IntN(3) == 0 {
				j = b
			}
			all.Add(int32(w), int32(1+int(8*p.Beta[w*k+j]*float64(d))%4))
		}
		all.EndDoc()
	}
	src := &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: 16}
	var batches []*stream.Docs
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b.Clone())
	}
	docs := memoryPass(batches)
	ws := newWarmStarts(batches)
	first := NewEMAcc(d, k)
	first.warm = ws
	if err := first.Pass(context.Background(), docs, 2, p, nil); err != nil {
		t.Fatal(err)
	}
	ws.swap()
	p2 := *p
	p2.Alpha, p2.Beta = slices.Clone(p.Alpha), slices.Clone(p.Beta)
	mStep(&p2, first, 0.01, false, 1)
	cold := NewEMAcc(d, k)
	if err := cold.Pass(context.Background(), docs, 2, &p2, nil); err != nil {
		t.Fatal(err)
	}
	var warm []*EMAcc
	for _, workers := range []int{1, 3} {
		a := NewEMAcc(d, k)
		a.warm = cloneWarm(ws)
		if err := a.Pass(context.Background(), docs, workers, &p2, nil); err != nil {
			t.Fatal(err)
		}
		warm = append(warm, a)
	}
	if !bytes.Equal(emBytes(t, warm[0]), emBytes(t, warm[1])) {
		t.Fatal("warm-started passes differ between 1 and 3 workers")
	}
	w := warm[0]
	diff := 0.0
	for i := range w.N {
		diff += math.Abs(w.N[i] - cold.N[i])
	}
	t.Logf("iterations: warm %d, cold %d; bound warm %.4f, cold %.4f; Σ|ΔN| %.2f of %d tokens", w.Iters, cold.Iters, w.Bound, cold.Bound, diff, w.Tokens)
	if float64(w.Iters) > 0.8*float64(cold.Iters) {
		t.Errorf("warm starts took %d iterations, cold ones %d", w.Iters, cold.Iters)
	}
	if w.Bound < cold.Bound-1e-3*math.Abs(cold.Bound) || diff > 0.02*float64(w.Tokens) {
		t.Errorf("warm starts: bound %.5f against cold %.5f, expected counts apart by %.2f of %d tokens", w.Bound, cold.Bound, diff, w.Tokens)
	}
}

// cloneWarm is a copy of w that passes can write apart from w.
func cloneWarm(w *warmStarts) *warmStarts {
	c := *w
	for _, b := range []*warmBuf{&c.cur, &c.next} {
		b.n, b.top, b.cnt = slices.Clone(b.n), slices.Clone(b.top), slices.Clone(b.cnt)
	}
	c.done = slices.Clone(w.done)
	return &c
}

// TestAutoCubeSample checks the automatic cube sample (CubeSample 0) on
// corpora whose second moment has negative directions (header words, as
// e-mail has) and at least four times the sample's tokens. Where the model
// leaves much of the third moment unexplained (5 topics fit to text of
// 30), the sample's error is small against that misfit: the cubes are
// summed over a sample of the sample's tokens, and the statistics route
// takes the same sample. Where LDA fits (10 of 10 topics), the sample's
// error is not small against the misfit: Fit sums every document's cubes
// in one more pass and gives their model. On data drawn from LDA (no
// negative direction) and on a corpus under four times the sample, every
// document's cubes are summed at once.
func TestAutoCubeSample(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		topics, k int
		keep      bool
	}{{30, 5, true}, {10, 10, false}} {
		lda, _ := corpus(t, synth.LDAConfig{Docs: 40000, Vocab: 1000, K: c.topics, Alpha0: 1, DocLen: 50, Seed: 42})
		src := headerDocs{lda, 1}
		cfg := Config{K: c.k, Alpha0: 1, Seed: 1, autoCubeTokens: 500000}
		m, err := Fit(ctx, src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		every := cfg
		every.CubeSample = -1
		mAll, err := Fit(ctx, src, every)
		if err != nil {
			t.Fatal(err)
		}
		cs := m.Fit.CubeSample
		if cs == nil || mAll.Fit.CubeSample != nil || math.Abs(cs.Rate-500000/float64(m.Fit.Tokens)) > 1e-12 {
			t.Fatalf("%d of %d topics, %d tokens: cube sample %+v, want %d tokens' share (every document: %+v)", c.k, c.topics, m.Fit.Tokens, cs, 500000, mAll.Fit.CubeSample)
		}
		t.Logf("%d of %d topics: rate %.3f, error %.4g, residual %.4g (every document's %.4g), redone %v, %d passes (every document %d)",
			c.k, c.topics, cs.Rate, cs.StdErr, *m.Fit.Solver.Residual, *mAll.Fit.Solver.Residual, cs.Redone, m.Fit.Passes, mAll.Fit.Passes)
		if cs.Redone == c.keep || cs.Redone != (cs.StdErr > cubeWarnShare**mAll.Fit.Solver.Residual) && !c.keep {
			t.Errorf("%d of %d topics: error %.4g, residual %.4g: redone %v", c.k, c.topics, cs.StdErr, *mAll.Fit.Solver.Residual, cs.Redone)
		}
		if sum, want := m.Summary(), map[bool]string{true: "sample of the documents (error", false: "cubes from every document (a"}[c.keep]; !strings.Contains(sum, want) {
			t.Errorf("summary %q, want it to say %q", sum, want)
		}
		// The sampled fit's power pass gathered the third moment's
		// statistics too (fused.go): one pass fewer, and one more when the
		// cubes are redone over every document, whitened alike to rounding.
		if !c.keep {
			apart := 0.0
			for i := range m.Topics {
				apart = max(apart, models.L1(m.Topics[i], mAll.Topics[i]))
			}
			if m.Fit.Passes != mAll.Fit.Passes || apart > 1e-4 {
				t.Errorf("redone: %d passes (every document %d), topics apart by ℓ1 %.3g", m.Fit.Passes, mAll.Fit.Passes, apart)
			}
			continue
		}
		if m.Fit.Passes != mAll.Fit.Passes-1 || strings.Contains(strings.Join(m.Fit.Warnings, "; "), "misfit") {
			t.Errorf("kept: %d passes (every document %d), warnings %q", m.Fit.Passes, mAll.Fit.Passes, m.Fit.Warnings)
		}
		// The statistics route: phase 1, the power statistics, phase 2.
		p1, err := Phase1Stats(ctx, src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pw, err := PowerStats(ctx, src, p1, cfg)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := Phase2Stats(ctx, src, pw, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := p2.Triple.Cubes; got.Rate != cs.Rate || got.Seed != cfg.Seed {
			t.Errorf("statistics route: cubes over %+v, Fit's over rate %g", got, cs.Rate)
		}
		// A fit of several k shares the sampled pass (a smaller k whose
		// block fails takes passes of its own, with their own choice).
		sw, err := FitK(ctx, src, []int{4, 5}, cfg, SweepOptions{NoScore: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, sm := range sw.Models {
			got := sm.Fit.CubeSample
			t.Logf("sweep, k=%d: cube sample %+v", sm.K, got)
			if sm.K == c.k && (got == nil || got.Rate != cs.Rate || got.Redone) {
				t.Errorf("sweep, k=%d: cube sample %+v, want rate %g", sm.K, got, cs.Rate)
			}
		}
		// Data drawn from LDA: no negative direction, every document.
		if pl, err := Fit(ctx, lda, cfg); err != nil || pl.Fit.CubeSample != nil {
			t.Errorf("data drawn from LDA: cube sample %+v (%v), want every document", pl.Fit.CubeSample, err)
		}
		// A sample of more than a quarter of the corpus saves too little.
		small := cfg
		small.autoCubeTokens = m.Fit.Tokens/autoCubeShare + 1
		if ms, err := Fit(ctx, src, small); err != nil || ms.Fit.CubeSample != nil {
			t.Errorf("sample of over a quarter of the tokens: %v, %v", ms.Fit.CubeSample, err)
		}
	}
}
