package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// Sweep is the result of FitK: a model for every k asked for, each scored
// on held-out documents and by the coherence of its topics, and the k
// recommended by the rule Recommend states.
type Sweep struct {
	// Models[i] is the model of Scores[i].K topics (ascending k).
	Models []*models.Model `json:"-"`
	// Scores[i] scores Models[i].
	Scores []KScore `json:"scores"`
	// Recommended is the k the rule picks, and Rule says the rule.
	Recommended int    `json:"recommended"`
	Rule        string `json:"rule"`
	// HeldOut says where the held-out documents came from: "source" (the
	// SweepOptions' HeldOut source) or "every 10th" (every 10th document
	// of the training source, index mod 10 = 9, which the models were not
	// fitted on).
	HeldOut string `json:"held_out"`
	// Passes counts the passes over the training documents of the whole
	// sweep (spectral and EM), and Seconds its wall time.
	Passes  int     `json:"passes"`
	Seconds float64 `json:"seconds"`
}

// KScore is the score of one model of a Sweep.
type KScore struct {
	K int `json:"k"`
	// Perplexity is the document-completion perplexity on the held-out
	// documents (Perplexity; lower is better), HeldOut the whole score.
	Perplexity float64  `json:"perplexity"`
	HeldOut    *HeldOut `json:"heldout"`
	// UMass, NPMI and Diversity score the top words of the topics over the
	// training documents (models/coherence; higher is better).
	UMass     float64 `json:"umass"`
	NPMI      float64 `json:"npmi"`
	Diversity float64 `json:"diversity"`
	// SharedStart reports whether the spectral start came from the largest
	// k's passes (a block of its whitened moments); false when it took
	// passes of its own (the largest k itself reports true).
	SharedStart bool `json:"shared_start"`
	// EMPasses is the EM passes the model took, and EMShared whether they
	// shared their reads of the documents with the other k.
	EMPasses int  `json:"em_passes"`
	EMShared bool `json:"em_shared"`
}

// SweepOptions are the settings of FitK beyond the fit's Config.
type SweepOptions struct {
	// HeldOut is the source of the held-out documents the models are
	// scored on. Nil holds out every 10th document of the training source
	// (document index mod 10 = 9): the models are fitted on the other nine
	// tenths, and scored on those.
	HeldOut stream.DocSource
	// Within is the recommendation's tolerance: the smallest k whose
	// held-out perplexity is within this share of the best (0:
	// DefaultWithin).
	Within float64
	// Top is the number of top words per topic scored for coherence and
	// diversity (0: coherence.DefaultTop).
	Top int
	// NoScore skips the scores (and the recommendation): FitK only fits,
	// on every document of the source.
	NoScore bool
	// SharedStart takes every smaller k's spectral start from the largest
	// k's passes (the blocks of its whitened moments, sweepBlocks) also
	// when the whitening is randomized: no spectral pass of their own, but
	// other starts than Fit's, from which the EM passes can settle at
	// other optima (on short documents, held-out perplexities 20% apart
	// either way). By default a randomized whitening gives each smaller k
	// the spectral passes Fit takes for it, so every model of the sweep is
	// Fit's; with the exact whitening (a vocabulary of at most ExactDim
	// words) the blocks are Fit's whitening and moments, and every k
	// shares the passes either way.
	SharedStart bool
	// OnPlan, when set, is called with the sweep's plan (PlanSweep)
	// before its first pass.
	OnPlan func(*SweepPlan)
	// OnEM, when set, is called after every EM pass of every model, one
	// call at a time, with the model's k, its EM pass count so far and the
	// training bound per token the pass measured.
	OnEM func(k, pass int, bound float64)
}

// DefaultWithin is the recommendation's default tolerance: the smallest k
// whose held-out perplexity is within 1% of the best.
const DefaultWithin = 0.01

// FitK fits a model for every k of ks (distinct, each as Fit's Config.K
// would be) to src with cfg (cfg.K is ignored), in the passes of about one
// fit of the largest k, scores them and recommends one:
//
//   - the spectral passes of the largest k run as Fit's. With the exact
//     whitening (a vocabulary of at most ExactDim words), or with
//     opt.SharedStart, every smaller k is whitened by the top k directions
//     of its whitening W and solved from the matching block of the pass's
//     whitened moments (Ê3(W_k,W_k,W_k), W_kᵀÊ2W_k, W_kᵀM̂1, Ê2·W_k), with
//     its own re-whitening, decomposition and recovery, as Fit runs them
//     after its own passes (sweepBlocks). With the exact whitening W_k is
//     the whitening Fit computes for k and the spectral model is Fit's;
//     with the randomized one the top directions are the Ritz vectors of
//     M̂2 on span(W), which span M̂2's top-k eigenspace better than Fit's
//     own sketch for k does, yet start EM elsewhere than Fit. Otherwise
//     (the default with the randomized whitening), and for a k whose block
//     the data refuse (or every k above what the data support, when the
//     largest falls back to fewer topics), a smaller k takes the spectral
//     passes Fit takes for it: its model is then Fit's, bit for bit.
//   - the EM passes (cfg.EM) of every k then run together: each read of
//     the documents serves every model's E-step, each model keeps its own
//     stopping rule and leaves the passes when it stops. Each model's EM
//     statistics are exact sums, so its passes give the model its
//     separate RefineEM would give, bit for bit. Models whose EM reads a
//     sample of a large corpus first (EM.Sample) or runs online EM take
//     their passes one model after another.
//   - unless opt.NoScore, every model is scored on held-out documents
//     (opt.HeldOut, or every 10th document of src, which the models are
//     then not fitted on) by Perplexity, and by the UMass and NPMI
//     coherence and the diversity of its top words over the training
//     documents (one read for all the models), and the smallest k whose
//     held-out perplexity is within opt.Within (1%) of the best is
//     recommended (recommend).
//
// Only the explicit third moment (Third Explicit, or Auto, which FitK
// then takes as Explicit) is shared between the k: with another
// representation every k takes spectral passes of its own, and
// opt.SharedStart is refused. cfg.Checkpoint is not supported. The memory
// is the sum of the models' (d·Σk for the moments' blocks and the EM
// statistics). The same source, ks and cfg give the same
// models and scores whatever cfg.Workers.
//
// FitKStats runs the same sweep from the statistics route's files
// (Phase1Stats, Phase2Stats of the largest k, merged over shards).
func FitK(ctx context.Context, src stream.DocSource, ks []int, cfg Config, opt SweepOptions) (*Sweep, error) {
	start := time.Now()
	ks, err := sweepKs(ks)
	if err != nil {
		return nil, err
	}
	switch {
	case opt.SharedStart && cfg.Third != "" && cfg.Third != Explicit && cfg.Third != Auto:
		return nil, fmt.Errorf("lda: SharedStart shares the explicit third moment between the k, not Third=%s", cfg.Third)
	case opt.SharedStart && cfg.Implicit:
		return nil, errors.New("lda: SharedStart shares the explicit third moment between the k, not Implicit rows")
	case cfg.Checkpoint.Dir != "":
		return nil, errors.New("lda: FitK does not checkpoint its passes")
	}
	train, held, where := src, opt.HeldOut, "source"
	if !opt.NoScore && held == nil {
		train, held, where = heldOutSplit{src, false}, heldOutSplit{src, true}, "every 10th"
	}
	info, tokens, _, err := sourceInfo(ctx, train)
	if err != nil {
		return nil, err
	}
	sp, err := planSweep(info, tokens, ks, cfg, opt)
	if err != nil {
		return nil, err
	}
	if opt.OnPlan != nil {
		opt.OnPlan(sp.atMachineSpeed())
	}
	if total := sysinfo.PhysicalMemory(); total > 0 && sp.PeakBytes > total {
		return nil, fmt.Errorf("lda: the sweep needs about %s, more than the machine's %s of memory: its EM passes hold every model at once (d·Σk); sweep fewer or smaller k, or fit the largest apart", bytesStr(sp.PeakBytes), bytesStr(total))
	}
	track := newTracker(cfg)
	ms, shared, err := sweepSpectralFits(ctx, train, ks, cfg, track, sp)
	if err != nil {
		return nil, err
	}
	return finishSweep(ctx, sweepRun{ks: ks, models: ms, shared: shared, train: train, held: held, where: where,
		vocab: train.Info().Vocab, track: track, start: start}, cfg, opt)
}

// sweepKs returns ks sorted, or an error when it is empty or lists a k
// twice.
func sweepKs(ks []int) ([]int, error) {
	ks = slices.Clone(ks)
	slices.Sort(ks)
	if len(ks) == 0 {
		return nil, errors.New("lda: FitK needs at least one k")
	}
	for i := 1; i < len(ks); i++ {
		if ks[i] == ks[i-1] {
			return nil, fmt.Errorf("lda: k=%d is listed twice", ks[i])
		}
	}
	return ks, nil
}

// sweepRun is a sweep whose spectral models are fitted: what finishSweep
// needs to refine and score them.
type sweepRun struct {
	ks     []int
	models []*models.Model // the spectral fit of each k of ks
	shared []bool          // which came from the largest k's passes
	// train is the documents the EM passes and the coherence read (nil:
	// none, the spectral models are the sweep's), held the held-out
	// documents (nil: no scores) and where says where they came from.
	train, held stream.DocSource
	where       string
	vocab       []string
	track       *tracker // the sweep's passes so far
	start       time.Time
	// refined, when set, says the models' EM passes ran elsewhere
	// (SweepFromStages) and which shared their reads: finishSweep runs
	// none.
	refined []bool
}

// finishSweep runs the shared EM passes of r's models over r.train, scores
// them unless opt.NoScore, and returns the sweep.
func finishSweep(ctx context.Context, r sweepRun, cfg Config, opt SweepOptions) (*Sweep, error) {
	emShared := r.refined
	if emShared == nil {
		emShared = make([]bool, len(r.models))
	}
	if r.train != nil && r.refined == nil {
		var err error
		if emShared, err = refineAll(ctx, r.train, r.models, cfg, r.track, opt.OnEM); err != nil {
			return nil, err
		}
	}
	sw := &Sweep{Models: r.models, Passes: r.track.passes}
	for i, m := range r.models {
		m.Vocab = r.vocab
		m.Fit.Passes = r.track.passes
		m.Fit.Seconds = time.Since(r.start).Seconds()
		s := KScore{K: r.ks[i], SharedStart: r.shared[i], EMShared: emShared[i]}
		if m.Fit.EM != nil {
			s.EMPasses = m.Fit.EM.Passes
		}
		sw.Scores = append(sw.Scores, s)
	}
	if !opt.NoScore {
		sw.HeldOut = r.where
		if err := scoreSweep(ctx, sw, r.train, r.held, cfg, opt); err != nil {
			return nil, err
		}
	}
	sw.Seconds = time.Since(r.start).Seconds()
	return sw, nil
}

// sweepSpectralFits runs the spectral fits of ks (sorted) as sp plans
// them: the largest k's passes, whose blocks give every smaller k's start
// when sp.Shared; any other smaller k (all of them otherwise, or one whose
// block the data refuse) takes the passes Fit takes for it. It returns the
// spectral model of every k, and which of them came from the largest k's
// passes.
func sweepSpectralFits(ctx context.Context, src stream.DocSource, ks []int, cfg Config, track *tracker, sp *SweepPlan) ([]*models.Model, []bool, error) {
	last := len(ks) - 1
	// start fits ks[i] by the passes of sp.Plans[i]; with sweep, they also
	// solve the smaller k from their blocks.
	start := func(i int, sweep *sweepSpectral) (*models.Model, error) {
		c := cfg
		c.K = ks[i]
		c, err := c.withDefaults(src.Info().Terms)
		if err != nil {
			return nil, err
		}
		plan := sp.Plans[i]
		if c.OnPlan != nil && i == last {
			c.OnPlan(plan.atMachineSpeed())
		}
		c = plan.apply(c)
		track.sweep, track.k = sweep, ks[i]
		if sweep != nil {
			track.k = 0 // the passes serve every k
		}
		m, err := spectralFit(ctx, src, c, plan, track)
		if err != nil {
			m, err = fewerTopics(ctx, src, c, plan, track, err)
		}
		track.sweep, track.k, track.exact = nil, 0, nil
		return m, err
	}
	var sweep *sweepSpectral
	if sp.Shared {
		sweep = &sweepSpectral{ks: ks[:last], models: map[int]*models.Model{}}
	}
	out, shared := make([]*models.Model, len(ks)), make([]bool, len(ks))
	var err error
	if out[last], err = start(last, sweep); err != nil {
		return nil, nil, err
	}
	shared[last] = true
	for i := range ks[:last] {
		if sweep != nil && sweep.models[ks[i]] != nil {
			out[i], shared[i] = sweep.models[ks[i]], true
			continue
		}
		if out[i], err = start(i, nil); err != nil {
			return nil, nil, err
		}
	}
	return out, shared, nil
}

// sweepSpectral solves every smaller k of FitK from the third-moment pass
// of the largest (thirdAndSolve calls solve in place of solveThird): the
// models of the last basis the passes tried, by k.
type sweepSpectral struct {
	ks     []int // the smaller k, ascending
	models map[int]*models.Model
}

// solve forms the moments of the pass th for the whitening b once, takes
// the block of every smaller k out of them (sweepBlocks), solves cfg.K
// (the largest, or fewer topics when the data refused it) from the whole
// moments, as Fit does, and then each smaller k from its block. A smaller
// k whose solve fails is left out (FitK gives it passes of its own).
func (s *sweepSpectral) solve(ctx context.Context, th *third, b *basis, cfg Config) (*models.Model, error) {
	clear(s.models)
	var mom *implicit.Whitened
	th.acc.Float32 = cfg.tripleFloat32()
	if err := stage(ctx, "moments", func(context.Context) (err error) {
		mom, err = th.acc.MomentsGiven(b.w, b.e2w, cfg.Workers)
		return err
	}); err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	var subs []int
	for _, k := range s.ks {
		if k < cfg.K {
			subs = append(subs, k)
		}
	}
	moms, bases := sweepBlocks(mom, b, cfg, subs)
	th.mom = mom
	m, err := solveThird(ctx, th, b, cfg)
	th.mom = nil
	if err != nil {
		return nil, err
	}
	for i, k := range subs {
		if moms[i] == nil {
			continue
		}
		ck := cfg
		ck.K = k
		mk, err := solveThird(ctx, &third{acc: th.acc, mom: moms[i], track: th.track}, bases[i], ck)
		moms[i], bases[i] = nil, nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			s.models[k] = mk
		}
	}
	return m, nil
}

// sweepBlocks returns, for each k of ks (below b's K), the whitening by
// the top k directions of the whitening b and the moments mom of a
// pass whitened by b, in that whitening (nil where the k-th direction is
// not positive).
//
// The exact whitening's columns are already M̂2's top eigenvectors,
// largest first: the top k columns and the top blocks of the
// moments (copies: the solve consumes them), the very whitening and
// moments Fit forms for k alone, up to the rounding of the pass's sums.
//
// A randomized whitening's columns are the top left singular vectors
// of the sketch M̂2·Ω, ordered by σᵢ ≈ λᵢ‖Ωᵀuᵢ‖, which reorders directions
// of close eigenvalues: on a generated corpus of 8 topics the first 3
// columns spanned the top-3 eigenspace of M̂2 at a smallest principal
// cosine of 0.12, though all 8 spanned the top 8 at 0.99
// (TestSweepWhitening). So the whitening is first turned into the Ritz
// vectors of M̂2 on span(W), W·R with R = D^{1/2}·V·Λ^{-1/2} where
// QᵀM̂2Q = D^{1/2}(WᵀM̂2W)D^{1/2} = VΛVᵀ (Λ decreasing; WᵀM̂2W measured
// by the pass), and the top k Ritz vectors whiten k: the moments are
// those of W·R_k (R_k the first k columns), Ê3(WR_k, WR_k, WR_k) =
// Ê3(W,W,W)(R_k,R_k,R_k) and so on, a k×k change of basis that is exact
// (no rounding beyond the products'), as the re-whitening is.
func sweepBlocks(mom *implicit.Whitened, b *basis, cfg Config, ks []int) ([]*implicit.Whitened, []*basis) {
	moms, bases := make([]*implicit.Whitened, len(ks)), make([]*basis, len(ks))
	if len(ks) == 0 {
		return moms, bases
	}
	if b.exact {
		for i, k := range ks {
			moms[i], bases[i] = subWhitened(mom, k), subBasis(b, k)
		}
		return moms, bases
	}
	r, vals, ok := ritzRotation(mom, b, cfg.m2Coef())
	if !ok {
		return moms, bases
	}
	d, kb := b.w.Dims()
	wr := mat.NewDense(d, kb, nil)
	wr.Mul(b.w, r)
	for i, k := range ks {
		if !(vals[k-1] > 0) {
			continue
		}
		rk := r.Slice(0, kb, 0, k).(*mat.Dense)
		moms[i] = rotatedWhitened(mom, rk)
		bases[i] = &basis{w: mat.DenseCopyOf(wr.Slice(0, d, 0, k)), values: slices.Clone(vals[:k]),
			exact: false, passes: b.passes, negative: b.negative, positive: b.positive}
		if b.tail > 0 && b.values[k-1] > 0 {
			bases[i].tail = b.tail * b.values[kb-1] / b.values[k-1]
		}
	}
	return moms, bases
}

// ritzRotation returns R = D^{1/2}·V·Λ^{-1/2} (see sweepBlocks) and the
// Ritz values Λ, largest first; columns of non-positive Ritz values are
// left unscaled. ok is false when the eigendecomposition failed.
func ritzRotation(mom *implicit.Whitened, b *basis, coef float64) (r *mat.Dense, vals []float64, ok bool) {
	g := whitenedM2(mom, coef)
	k := len(b.values)
	s := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			s.SetSym(i, j, g.At(i, j)*math.Sqrt(b.values[i]*b.values[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, nil, false
	}
	asc := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	r = mat.NewDense(k, k, nil)
	vals = make([]float64, k)
	for j := range k {
		src := k - 1 - j
		vals[j] = asc[src]
		scale := 1.0
		if asc[src] > 0 {
			scale = 1 / math.Sqrt(asc[src])
		}
		for i := range k {
			r.Set(i, j, math.Sqrt(b.values[i])*v.At(i, src)*scale)
		}
	}
	return r, vals, true
}

// rotatedWhitened returns the moments of the whitening W·rk (rk K×k) from
// those of W: RᵀM1, RᵀE2R, E3(R,R,R) and Ê2·W·R (RawM1 shared, read
// only).
func rotatedWhitened(mom *implicit.Whitened, rk *mat.Dense) *implicit.Whitened {
	kb, k := rk.Dims()
	d, _ := mom.E2W.Dims()
	m1 := make([]float64, k)
	mat.NewVecDense(k, m1).MulVec(rk.T(), mat.NewVecDense(kb, mom.M1))
	var t, e2d mat.Dense
	t.Mul(mom.E2, rk)
	e2d.Mul(rk.T(), &t)
	e2 := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			e2.SetSym(i, j, (e2d.At(i, j)+e2d.At(j, i))/2)
		}
	}
	var e3 *tensor.Sym3
	if mom.E3 != nil {
		e3 = implicit.Transform(mom.E3, rk)
	}
	e2w := mat.NewDense(d, k, nil)
	e2w.Mul(mom.E2W, rk)
	return &implicit.Whitened{Counts: mom.Counts, M1: m1, E2: e2, E3: e3, RawM1: mom.RawM1, E2W: e2w}
}

// subWhitened returns the moments of the whitening by the first k columns
// of the W that mom was formed with: the top blocks of its whitened
// moments and the first k columns of Ê2·W (copies: the solve consumes
// them; RawM1 is shared, read only).
func subWhitened(mom *implicit.Whitened, k int) *implicit.Whitened {
	d, _ := mom.E2W.Dims()
	e2 := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			e2.SetSym(i, j, mom.E2.At(i, j))
		}
	}
	var e3 *tensor.Sym3
	if mom.E3 != nil {
		e3 = tensor.NewSym3(k)
		q := 0
		for i := range k {
			for j := i; j < k; j++ {
				for l := j; l < k; l++ {
					e3.Data[q] = mom.E3.At(i, j, l)
					q++
				}
			}
		}
		e3.Invalidate()
	}
	return &implicit.Whitened{Counts: mom.Counts, M1: slices.Clone(mom.M1[:k]), E2: e2, E3: e3,
		RawM1: mom.RawM1, E2W: mat.DenseCopyOf(mom.E2W.Slice(0, d, 0, k))}
}

// subBasis is the whitening by the first k columns of b: its top k
// directions, their scales, and the tail σ_last/σ_k of the same sketch.
func subBasis(b *basis, k int) *basis {
	d, kb := b.w.Dims()
	sb := &basis{w: mat.DenseCopyOf(b.w.Slice(0, d, 0, k)), values: slices.Clone(b.values[:k]),
		exact: b.exact, passes: b.passes, negative: b.negative, positive: b.positive}
	if b.tail > 0 && b.values[k-1] > 0 {
		sb.tail = b.tail * b.values[kb-1] / b.values[k-1]
	}
	return sb
}
