package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ErrTooManyTopics reports that the data support fewer topics than asked for:
// the corrected second moment has fewer than k positive eigenvalues, or the
// whitened third moment fewer than k positive eigenvalues.
var ErrTooManyTopics = errors.New("k is larger than the data support")

// Fit learns an LDA (or, with cfg.Single, a single-topic) model of
// cfg.K topics from src: two streamed passes for the spectral fit, a power
// pass or a wider sketch when real text needs them (at most 5 passes on
// the corpora measured), then cfg.EM.Passes likelihood passes (the package
// comment describes each). Memory is O(d·k + k³), or O(d·k) with the
// sketched or implicit third moment, whatever the number of documents.
// The same source, cfg.Seed and representation give the same model bit for
// bit whatever cfg.Workers; with the explicit tensor it is the model the
// shard workflow gives (FitStats of the merged Phase1Stats, PowerStats and
// Phase2Stats) before the EM passes. Errors: a bad cfg, a source error
// (naming the source), ErrTooManyTopics when the data support fewer than
// k topics, implicit.ErrNoDocs when no document has 3 tokens, and ctx's
// error when ctx ends.
func Fit(ctx context.Context, src stream.DocSource, cfg Config) (*models.Model, error) {
	start := time.Now()
	info := src.Info()
	d := info.Terms
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return nil, err
	}
	if cfg.Checkpoint.Dir != "" {
		unlock, err := lockCheckpoints(cfg.Checkpoint.Dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	plan, cfg, err := planFor(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	track := newTracker(cfg)
	if em := cfg.EM.withDefaults(); cfg.EM.Passes > 0 && !em.Online {
		track.emTap = &emTap{em: em, d: d, k: cfg.K, seed: cfg.Seed}
	}
	m, err := spectralFit(ctx, src, cfg, plan, track)
	if err != nil {
		// The data support fewer spectral directions than k: the spectral
		// fit of what they support, brought to k topics by splitting the
		// heaviest, is the start the EM passes refine.
		m, err = fewerTopics(ctx, src, cfg, plan, track, err)
	}
	if err != nil {
		return nil, err
	}
	// The third-moment pass's exact totals (and the whitening they
	// reference) serve statistics files, not Fit: let the EM passes reuse
	// their memory (d·k arrays that are most of the spectral fit's peak).
	track.exact = nil
	if cfg.EM.Passes > 0 {
		if err := stage(ctx, "em", func(ctx context.Context) error { return refine(ctx, src, m, cfg, track, true) }); err != nil {
			return nil, err
		}
	}
	m.Vocab = info.Vocab
	m.Fit.Passes = track.passes
	m.Fit.Plan = plan.Record()
	m.Fit.Seconds = time.Since(start).Seconds()
	return m, nil
}

// planFor plans the fit of src with cfg (defaults set) as Fit does:
// PlanSource, which reads a sample of src for its entries, when the plan
// chooses the representation or cfg.OnPlan reads it, else PlanFit. It
// reports the plan to cfg.OnPlan, refuses one the machine cannot hold, and
// returns cfg with the plan's choices.
func planFor(ctx context.Context, src stream.DocSource, cfg Config) (*Plan, Config, error) {
	var plan *Plan
	var err error
	if cfg.Third == Auto || cfg.OnPlan != nil {
		plan, err = planSource(ctx, src, cfg)
	} else {
		// Nobody reads the prediction: no sample read for the entries.
		plan, err = planFit(src.Info(), -1, cfg)
	}
	if err != nil {
		return nil, cfg, err
	}
	if cfg.OnPlan != nil {
		// Only a plan someone reads needs the machine's speed.
		cfg.OnPlan(plan.atMachineSpeed())
	}
	if err := plan.machineFits(src.Info()); err != nil {
		return nil, cfg, err
	}
	return plan, plan.apply(cfg), nil
}

// spectralFit runs the spectral passes and the solve of Fit, sketching
// again with more columns while a sketch's range holds fewer than k
// positive directions of M̂2 that more columns may find.
func spectralFit(ctx context.Context, src stream.DocSource, cfg Config, plan *Plan, track *tracker) (*models.Model, error) {
	d := src.Info().Terms
	for negative, pos := false, -1; ; negative = true {
		m, err := fitPasses(ctx, src, cfg, plan, track, negative)
		var few *fewPositiveError
		if !errors.As(err, &few) || !few.sketch || cfg.PowerIters != 0 {
			return m, err
		}
		if few.cols >= d || few.pos <= pos {
			// A larger sketch that found no more positive directions will
			// not: the data hold no more.
			few.sketch = false
			return m, err
		}
		pos = few.pos
		// The range of the sketch held fewer than k positive directions of
		// M̂2 among its negative ones: sketch again with more columns.
		cfg.Oversample = min(d, few.moreCols()) - cfg.K
	}
}

// fewerTopics answers a spectral fit that the data refused for k topics
// (err, ErrTooManyTopics; any other error is returned as it is, and so is
// k above the usable documents, which no model answers): it fits
// the fewer topics the data support (as many as the refusal counted, or a
// fifth fewer at a time when it did not count them, down to 1) and brings
// that model to k topics by splitting the heaviest (splitTopics), with a
// warning in m.Fit.Warnings. The passes of every attempt count. Real text
// does this at a k that gensim and scikit-learn fit without a complaint:
// its second moment is not LDA's, and its tail of small directions holds
// negative ones.
func fewerTopics(ctx context.Context, src stream.DocSource, cfg Config, plan *Plan, track *tracker, err error) (*models.Model, error) {
	k := cfg.K
	if !errors.Is(err, ErrTooManyTopics) {
		return nil, err
	}
	if int64(k) > track.usable {
		return nil, fmt.Errorf("%w: k=%d topics from %d usable documents (of at least %d tokens); lower k to %d", ErrTooManyTopics, k, track.usable, implicit.MinTokens, max(track.usable, 1))
	}
	low := cfg
	// The checkpoints of the fit of k topics do not serve a fit of fewer.
	low.Checkpoint = Checkpoint{}
	for range 6 {
		if !errors.Is(err, ErrTooManyTopics) || ctx.Err() != nil {
			return nil, err
		}
		next := supportedTopics(err, low.K)
		if next < 1 || next >= low.K {
			return nil, err
		}
		low.K = next
		low.Oversample = cfg.Oversample
		var m *models.Model
		if m, err = spectralFit(ctx, src, low, plan, track); err == nil {
			splitTopics(m, k, cfg.Seed)
			m.Fit.Warnings = append(m.Fit.Warnings, fmt.Sprintf(
				"the data support %d spectral topics, not k=%d (the second moment's small directions hold negative ones, as real text's do): the spectral fit has %d, and %d more were split from the heaviest for the EM passes to separate",
				next, k, next, k-next))
			return m, nil
		}
	}
	return nil, err
}

// supportedTopics is the number of topics a refusal for k says the data
// support: the positive directions it counted, else a fifth fewer than k.
func supportedTopics(err error, k int) int {
	var few *fewPositiveError
	var neg *negativeError
	switch {
	case errors.As(err, &few):
		return min(few.pos, k-1)
	case errors.As(err, &neg):
		return k - max(neg.bad, 1)
	}
	return k - max(1, k/5)
}

// splitTopics brings m to k topics: while it has fewer, its heaviest topic
// (largest α) is split in two, each its words' probabilities times
// 1 ± δz (z standard normal, seeded; δ a quarter), renormalised, and its
// weight halved between them. The EM passes that follow move the halves
// apart; the per-topic diagnostics of the spectral fit are copied to
// the new topic.
func splitTopics(m *models.Model, k int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x5b1175))
	for m.K < k {
		j := 0
		for i, a := range m.Alpha {
			if a > m.Alpha[j] {
				j = i
			}
		}
		a, b := slices.Clone(m.Topics[j]), make([]float64, len(m.Topics[j]))
		for w, v := range m.Topics[j] {
			z := 0.25 * r.NormFloat64()
			a[w], b[w] = max(v*(1+z), 0), max(v*(1-z), 0)
		}
		normalise(a)
		normalise(b)
		m.Topics[j] = a
		m.Topics = append(m.Topics, b)
		m.Alpha[j] /= 2
		m.Alpha = append(m.Alpha, m.Alpha[j])
		if s := &m.Fit.Solver; j < len(s.Eigenvalues) {
			s.Eigenvalues = append(s.Eigenvalues, s.Eigenvalues[j])
		}
		if f := m.Fit; j < len(f.ProjectionL1) {
			f.ProjectionL1 = append(f.ProjectionL1, f.ProjectionL1[j])
		}
		m.K++
	}
}

// normalise scales v to sum to 1 (uniform when it sums to 0).
func normalise(v []float64) {
	if s := floats.Sum(v); s > 0 {
		floats.Scale(1/s, v)
		return
	}
	for i := range v {
		v[i] = 1 / float64(len(v))
	}
}

// RefineEM runs the EM passes of cfg.EM over src on m, the spectral fit of
// src's statistics (FitStats), as the last step of Fit does, and stores the
// refined topics and weights in m: FitStats of src's statistics (merged
// from shards in any order) followed by RefineEM over src gives the model of
// Fit(src, cfg) bit for bit. cfg.EM.Passes 0 leaves m as it is. m must be
// over src's vocabulary. With cfg.Checkpoint the passes are saved and
// resumed as Fit's are.
func RefineEM(ctx context.Context, src stream.DocSource, m *models.Model, cfg Config) error {
	info := src.Info()
	if info.Terms != m.D {
		return fmt.Errorf("lda: the model has %d words, the documents %d", m.D, info.Terms)
	}
	if m.Vocab != nil && info.Vocab != nil && !slices.Equal(m.Vocab, info.Vocab) {
		return errors.New("lda: the documents' vocabulary differs from the model's")
	}
	if cfg.EM.Passes <= 0 {
		return nil
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Checkpoint.Dir != "" {
		unlock, err := lockCheckpoints(cfg.Checkpoint.Dir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	start := time.Now()
	track := newTracker(cfg)
	track.passes = m.Fit.Passes
	if err := stage(ctx, "em", func(ctx context.Context) error { return refine(ctx, src, m, cfg, track, false) }); err != nil {
		return err
	}
	if m.Vocab == nil {
		m.Vocab = info.Vocab
	}
	m.Fit.Passes = track.passes
	m.Fit.Seconds += time.Since(start).Seconds()
	return nil
}

// fitPasses runs the passes of Fit and the solve. With negative (a previous
// sketch found negative directions of M̂2 among its largest), or when the
// first documents show one in W (peekNegative), the power pass over the
// first sketch's range (rangePass) is taken at once rather than after a
// third-moment pass that would meet them.
func fitPasses(ctx context.Context, src stream.DocSource, cfg Config, plan *Plan, track *tracker, negative bool) (*models.Model, error) {
	d := src.Info().Terms
	omega := sketchMatrix(d, cfg)
	// Only a first sketch without a power pass asked for can be peeked at:
	// then pass 1 keeps the first documents.
	mayPeek := !negative && cfg.PowerIters == 0 && !cfg.exact(d)
	pass1, keep := src, &headKeeper{DocSource: src}
	if mayPeek {
		pass1 = keep
	}
	p1, err := pairPass(ctx, pass1, omega, cfg, track)
	if err != nil {
		return nil, err
	}
	var b *basis
	if err := stage(ctx, "whitening", func(ctx context.Context) (err error) {
		b, err = whitening(ctx, p1, omega, cfg, src, track, true, false)
		return err
	}); err != nil {
		return nil, err
	}
	if r := plan.Revise(b.passes + 1); r != nil && cfg.OnPlan != nil {
		cfg.OnPlan(r) // the automatic power pass was taken
	}
	peeked := false
	if mayPeek && b.extra != nil {
		// The first documents tell whether W holds a negative direction
		// of M̂2 before the third-moment pass pays for every document's
		// cubes to find it.
		if peeked, err = peekNegative(ctx, src, keep.kept, b, cfg); err != nil {
			return nil, err
		}
		negative = peeked
	}
	for {
		var th *third
		if negative && b.extra != nil {
			// W from the first sketch holds a negative direction of M̂2:
			// whiten again from a power pass over the sketch's whole range
			// (unless the whole data show none, after a peek: keep W),
			// with the third moment's statistics where it can (fused.go).
			nb, fused, holds, err := powerPass(ctx, b, cfg, plan, src, track, peeked)
			th = fused
			if err != nil {
				return nil, err
			}
			if holds {
				b = nb
			}
			peeked = false
		}
		m, err := thirdAndSolve(ctx, src, b, cfg, track, th)
		var neg *negativeError
		if !errors.As(err, &neg) || b.extra == nil || cfg.PowerIters != 0 {
			if neg != nil && cfg.PowerIters < 0 && !b.exact {
				neg.advice = "the power pass that separates them was ruled out (PowerIters = -1): allow it (PowerIters = 0), or lower k"
			}
			return m, err
		}
		negative = true
	}
}

// thirdAndSolve runs the third-moment pass whitened by b and the solve.
// When the cubes were an automatic sample (Config.CubeSample 0) whose
// error proved not well below the model's misfit to the moment, or whose
// solve failed, it sums them over every document in one more pass and
// solves again: the sample is kept only where it is measured to cost
// nothing the model could use. (The statistics route, whose passes are
// already summed, and a fit of several k, whose models share the pass,
// warn instead.)
func thirdAndSolve(ctx context.Context, src stream.DocSource, b *basis, cfg Config, track *tracker, th *third) (*models.Model, error) {
	m, err := thirdAndSolveOnce(ctx, src, b, cfg, track, th)
	d, k := b.w.Dims()
	var neg *negativeError
	if cfg.CubeSample != 0 || track.sweep != nil || cfg.cubeSample(track.tokens, d, k, b.negative).All() || ctx.Err() != nil || errors.As(err, &neg) {
		return m, err
	}
	var tried *models.CubeSample
	if err == nil {
		tried = m.Fit.CubeSample
		if !noisyCubes(tried, m.Fit.Solver.Residual) {
			return m, nil
		}
	}
	every := cfg
	every.CubeSample = -1
	m, err = thirdAndSolveOnce(ctx, src, b, every, track, nil)
	if err == nil && tried != nil {
		m.Fit.CubeSample = &models.CubeSample{Rate: tried.Rate, StdErr: tried.StdErr, Redone: true}
	}
	return m, err
}

// thirdAndSolveOnce is one third-moment pass and its solve; with th (the
// statistics of a power pass that gathered them: fused.go), the solve
// alone.
func thirdAndSolveOnce(ctx context.Context, src stream.DocSource, b *basis, cfg Config, track *tracker, th *third) (*models.Model, error) {
	if th == nil {
		var err error
		if th, err = thirdPass(ctx, src, b, cfg, track); err != nil {
			return nil, err
		}
	}
	defer th.close()
	th.track = track
	var m *models.Model
	err := stage(ctx, "solve", func(ctx context.Context) (err error) {
		if track.sweep != nil {
			m, err = track.sweep.solve(ctx, th, b, cfg)
			return err
		}
		m, err = solveThird(ctx, th, b, cfg)
		return err
	})
	return m, err
}

// rangePass is the power pass Fit takes when the whitening b from the first
// sketch proved to hold a negative direction of M̂2 (negativeError, or a
// peek at the first documents: peekNegative): the pair sums against
// Q = [W·D^{1/2} | extra], an orthonormal basis of the first sketch's whole
// range, whose exact Ritz values tell the positive directions from the
// negative ones (whitening, powered). It is the basis the statistics route
// gets from PowerStats of the phase-1 statistics (Q spans the same range),
// so the two give the same model. With check (after a peek), it first
// measures WᵀM̂2W on the whole data from the same sums and, when that is
// positive definite (holds false), returns b itself: the third-moment pass
// then runs with W as it would have without the peek.
func rangePass(ctx context.Context, b *basis, cfg Config, src stream.DocSource, track *tracker, check bool) (nb *basis, holds bool, err error) {
	q := b.rangeBasis()
	acc, err := pairPass(ctx, src, q, cfg, track)
	if err != nil {
		return nil, false, err
	}
	return whitenRange(ctx, b, q, acc, cfg, track, check)
}

// whitenRange is the whitening of a power pass over q = b.rangeBasis()
// whose pair sums are acc (rangePass; or the fused pass's, fused.go):
// with check, b itself (holds false) when WᵀM̂2W is positive definite,
// else the Ritz whitening, with Ê2·W from the same sums where it lies in
// q's span.
func whitenRange(ctx context.Context, b *basis, q *mat.Dense, acc *implicit.PairAcc, cfg Config, track *tracker, check bool) (nb *basis, holds bool, err error) {
	// M̂2·Q and QᵀM̂2Q once, for the check and the whitening.
	y, err := m2Times(acc, cfg.m2Coef(), q, true)
	if err != nil {
		return nil, false, fmt.Errorf("lda: %w", err)
	}
	var qaq mat.Dense
	qaq.Mul(q.T(), y)
	if check {
		holds, err := negativeOnW(&qaq, b)
		if err != nil || !holds {
			return b, false, err
		}
	}
	err = stage(ctx, "whitening", func(ctx context.Context) (err error) {
		if nb, err = whitenSketch(ctx, y, &qaq, q, cfg, nil, track, true, true); err == nil && nb.negative > 0 && !cfg.pairSums {
			nb.e2w = pairOnSpan(y, q, nb.w, acc, cfg.m2Coef())
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	nb.passes = b.passes + 1
	return nb, true, nil
}

// pairOnSpan returns Ê2·W for a W inside the span of the orthonormal q,
// from y = M̂2·q = Ê2·q − coef·M̂1(M̂1ᵀq) and the power pass's sums acc:
// Ê2·W = y·(qᵀW) + coef·M̂1(M̂1ᵀW), since q·qᵀW = W. It costs two d×l×k
// products, where the third-moment pass would sum Ê2·W over every entry.
func pairOnSpan(y, q, w *mat.Dense, acc *implicit.PairAcc, coef float64) *mat.Dense {
	d, k := w.Dims()
	var c mat.Dense
	c.Mul(q.T(), w)
	e2w := mat.NewDense(d, k, nil)
	e2w.Mul(y, &c)
	if coef != 0 {
		m1 := mat.NewVecDense(d, nil)
		m1.ScaleVec(1/float64(acc.Docs), mat.NewVecDense(d, acc.M1))
		var mw mat.VecDense
		mw.MulVec(w.T(), m1)
		e2w.RankOne(e2w, coef, m1, &mw)
	}
	return e2w
}

// rangeCols is the number of columns of rangeBasis.
func (b *basis) rangeCols() int {
	_, e := b.extra.Dims()
	return len(b.values) + e
}

// rangeBasis is Q = [W·D^{1/2} | extra], an orthonormal basis of the first
// sketch's whole range (b.extra non-nil).
func (b *basis) rangeBasis() *mat.Dense {
	d, k := b.w.Dims()
	_, e := b.extra.Dims()
	q := mat.NewDense(d, k+e, nil)
	for j, v := range b.values {
		for i := range d {
			q.Set(i, j, b.w.At(i, j)*math.Sqrt(v))
		}
	}
	q.Slice(0, d, k, k+e).(*mat.Dense).Copy(b.extra)
	return q
}

// negativeOnW reports whether WᵀM̂2W (W = b.w) has an eigenvalue that is not
// positive, as rewhiten judges the third-moment pass's, from qaq = QᵀM̂2Q
// for the Q of rangePass (whitenedOnRange).
func negativeOnW(qaq *mat.Dense, b *basis) (bool, error) {
	vals, err := whitenedOnRange(qaq, b)
	if err != nil {
		return false, err
	}
	return nonPositive(vals) > 0, nil
}

// whitenedOnRange returns the eigenvalues (increasing) of WᵀM̂2W from
// qaq = QᵀM̂2Q for Q = b.rangeBasis(), whose first k columns are W·D^{1/2}:
// WᵀM̂2W is D^{-1/2}·qaq[:k,:k]·D^{-1/2}, a k×k matrix (no product over
// the vocabulary).
func whitenedOnRange(qaq *mat.Dense, b *basis) ([]float64, error) {
	k := len(b.values)
	g := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			g.SetSym(i, j, (qaq.At(i, j)+qaq.At(j, i))/2/math.Sqrt(b.values[i]*b.values[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(g, false) {
		return nil, errors.New("lda: eigendecomposition of the whitened second moment on the first sketch's range did not converge")
	}
	return es.Values(nil), nil
}

// thirdPass runs the second pass, whitened by b, into the representation
// cfg.Third: the explicit triple statistics (triplePass), or statistics
// without cubes whose row hook sketches the rows or stores them on disk.
// b's count of negative directions of M̂2 decides the cubes' sample
// (cubeSample); the pair sums are skipped where b holds Ê2·W already.
func thirdPass(ctx context.Context, src stream.DocSource, b *basis, cfg Config, track *tracker) (*third, error) {
	w, negative, noPair := b.w, b.negative, b.e2w != nil
	d, k := w.Dims()
	th := &third{}
	switch cfg.Third {
	case Sketch:
		b, count := cfg.sketchSize()
		th.sketch = implicit.NewSketchAcc(d, k, implicit.SketchConfig{Len: b, Count: count, Seed: cfg.Seed})
		th.acc = th.sketch.TripleAcc
	case Rows:
		rows, err := implicit.NewRowAcc(d, k, cfg.RowDir, implicit.RowStoreOptions{Workers: cfg.Workers})
		if err != nil {
			return nil, err
		}
		th.rows, th.acc = rows, rows.TripleAcc
	default:
		acc, err := triplePass(ctx, src, w, cfg.cubeSample(track.tokens, d, k, negative), noPair, cfg, track)
		if err != nil {
			return nil, err
		}
		th.acc = acc
		return th, nil
	}
	th.acc.Float32 = !cfg.float64Sums
	if noPair {
		th.acc.SkipPair()
	}
	if err := runThird(ctx, src, th.acc, w, cfg, track); err != nil {
		th.close()
		return nil, err
	}
	return th, nil
}

// runThird runs acc's pass over src as the third-moment pass of the fit.
func runThird(ctx context.Context, src stream.DocSource, acc *implicit.TripleAcc, w *mat.Dense, cfg Config, track *tracker) error {
	pass := track.begin()
	if err := stage(ctx, passLabel(pass, "third-moment"), func(ctx context.Context) error {
		return acc.Pass(ctx, track.third(src).Docs, cfg.Workers, w, func(n int) { track.report(pass, "third-moment", n, false) })
	}); err != nil {
		return err
	}
	track.report(pass, "third-moment", 0, true)
	return nil
}
