package lda

import (
	"context"
	"fmt"
	"iter"
	"math"
	"sort"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
)

// EM configures the likelihood refinement that follows the spectral fit
// (Config.EM): batch variational EM passes over the source, each an E-step
// per document with the current topics and α (EStep) whose
// expected word-topic counts add up over the pass (EMAcc), then an
// M-step. The zero value refines nothing: the pure spectral fit.
//
// Batch EM by default, online EM (Online) as an option: a batch pass
// gives statistics that add up over batches and shards (the statistics
// route, the Beam pipeline), one M-step per pass whose bound does not
// decrease (exactly so with E-steps run to convergence; the stopping rule
// reads it), and a state between passes of d·k numbers; online EM's state
// is twice that, its pass's bound mixes parameters and its model depends
// on the mini-batch size, and it is offered for the higher topic
// diversity it keeps on some corpora. An online pass costs more than a
// batch one: its M-step and the exact statistics' bookkeeping run over all
// d·k entries once per mini-batch.
type EM struct {
	// Passes caps the EM passes (0: none).
	Passes int
	// Tol stops the passes when the bound improved by less than Tol
	// relatively in the last pass (0: DefaultEMTol).
	Tol float64
	// FitAlpha updates LDA's α in every M-step by Minka's fixed point
	// (α₀ is then no longer the one given); for the single-topic model
	// the topic weights are always updated.
	FitAlpha bool
	// Eta is the pseudo-count added to every word of every topic in the
	// M-step (a Dirichlet(1+η) prior on the topics, whose log density the
	// bound includes; 0: DefaultEta). It keeps every word possible in
	// every topic.
	Eta float64
	// Relax over-relaxes the topics' M-step: β ← β_old^{1−Relax}·β_EM^{Relax},
	// each topic normalised (0: DefaultRelax; 1: plain EM). A pass whose
	// bound fell below the previous one's is followed by a plain step, and
	// does not end the passes. See DefaultRelax.
	Relax float64
	// EStepTol and EStepPrune are the E-step's tolerance and pruning
	// (TopicParams.Tol and Prune; 0: DefaultEStepTol and
	// DefaultEStepPrune, negative EStepPrune: never prune).
	EStepTol, EStepPrune float64
	// EStepOverrelax stretches the E-step's fixed-point steps
	// (TopicParams.Overrelax; 0: DefaultEStepOverrelax, 1: the
	// plain iteration).
	EStepOverrelax float64
	// Online runs online (stepwise) EM passes instead of batch ones: an
	// M-step after every mini-batch of MiniBatch documents, with step
	// sizes ρ_t = (Tau0+t)^−Kappa (em_online.go). Relax does not apply.
	// The statistics route (EMPassStats, EMStep) runs batch passes only.
	Online bool
	// MiniBatch is online EM's documents per M-step (0: DefaultMiniBatch).
	MiniBatch int
	// Kappa, in (0.5, 1], and Tau0 ≥ 0 set online EM's step sizes
	// (0: DefaultKappa, DefaultTau0).
	Kappa, Tau0 float64
	// Sample is the tokens of the seeded sample of documents the first
	// batch passes of a larger corpus run on, until they converge on it or
	// leave FullPasses passes of the cap (0: the larger of DefaultSample
	// and SampleTokensPerParam tokens per topic-word parameter, d·k, so
	// the sample's M-steps do not fit its noise; negative: every pass
	// reads every document). The documents of the sample are held in
	// memory before the first pass on them (8 bytes an entry; Fit keeps
	// them in its third-moment pass, RefineEM in a read of its own), and
	// every pass on them reads that copy; a corpus of at most Sample
	// tokens is kept by the first pass over it. See em_sample.go.
	Sample int64
	// FullPasses is the passes over every document that follow the
	// sample's (0: DefaultFullPasses; negative: none, the sample's passes
	// end the refinement).
	FullPasses int
	// SampleTol is the stopping rule's tolerance for the passes on the
	// sample, which cost the sample's share of a pass over every document
	// (0: Tol/DefaultSampleTolDiv).
	SampleTol float64
	// FullGain skips the passes over every document when the sample's
	// learning curve (em_sample.go, fullGain) predicts they would raise
	// the held-out sample's bound by less than FullGain relatively (0:
	// SampleTol, the least rise a pass on the sample goes on for;
	// negative: they always run).
	FullGain float64
}

// Defaults of EM. DefaultEMTol ends the passes where the held-out
// perplexity has stopped moving much; DefaultRelax stretches each M-step
// in log β by half (Salakhutdinov and Roweis 2003, "Adaptive overrelaxed
// bound optimization methods"), since from the spectral start batch EM's
// steps point the same way pass after pass and each falls short.
const (
	DefaultEMTol = 1e-2
	DefaultEta   = 0.01
	DefaultRelax = 1.5
	// DefaultEStepTol and DefaultEStepPrune are the EM passes' E-step
	// tolerance and pruning, looser than the E-step's own defaults
	// (DefaultInferTol and DefaultInferPrune, which inference and scoring
	// keep): a document's iteration stops when it moves less than 3% of
	// its tokens, and a topic leaves it below 1% of them, since a pass
	// only needs the expected counts to a precision the next pass refines.
	DefaultEStepTol   = 0.03
	DefaultEStepPrune = 0.01
	// DefaultEStepOverrelax stretches each document's fixed-point steps
	// by half (successive over-relaxation of γ): the same fixed points in
	// fewer iterations; 2 makes the iteration oscillate.
	DefaultEStepOverrelax = 1.5
	// DefaultSample is the least EM.Sample by default: 2^22 tokens, at
	// most 40 MiB of entries in memory with the held-out sample's.
	DefaultSample = 1 << 22
	// SampleTokensPerParam is EM.Sample by default where it is more than
	// DefaultSample: tokens per topic-word parameter. At 2 (9.2 million
	// tokens of the Go source tree, 55,000 words, k=100, sampled at
	// 46%) the held-out perplexity was 2.8% above EM over every document's.
	SampleTokensPerParam = 4
	// DefaultFullPasses is EM.FullPasses.
	DefaultFullPasses = 1
	// DefaultSampleTolDiv divides EM.Tol into the sample's tolerance: a
	// pass on a sample of a tenth of the corpus costs a tenth of one over
	// every document, so the sample's passes go on to where the passes
	// over every document would otherwise take them.
	DefaultSampleTolDiv = 5
	// startMix is the weight of the uniform distribution mixed into the
	// spectral topics before the first E-step: the projection onto the
	// simplex leaves exact zeros, and a word with probability zero in a
	// topic could never be given to it.
	startMix = 0.01
)

func (e EM) withDefaults() EM {
	if e.Tol <= 0 {
		e.Tol = DefaultEMTol
	}
	if e.Eta <= 0 {
		e.Eta = DefaultEta
	}
	if e.Relax <= 0 {
		e.Relax = DefaultRelax
	}
	if e.EStepTol <= 0 {
		e.EStepTol = DefaultEStepTol
	}
	if e.EStepPrune == 0 {
		e.EStepPrune = DefaultEStepPrune
	}
	if e.EStepOverrelax <= 0 {
		e.EStepOverrelax = DefaultEStepOverrelax
	}
	if e.FullPasses == 0 {
		e.FullPasses = DefaultFullPasses
	}
	if e.SampleTol <= 0 {
		e.SampleTol = e.Tol / DefaultSampleTolDiv
	}
	if e.FullGain == 0 {
		e.FullGain = e.SampleTol
	}
	if e.Online {
		if e.MiniBatch == 0 {
			e.MiniBatch = DefaultMiniBatch
		}
		if e.Kappa == 0 {
			e.Kappa = DefaultKappa
		}
		if e.Tau0 == 0 {
			e.Tau0 = DefaultTau0
		}
	}
	return e
}

// emState is the model between EM passes.
type emState struct {
	params TopicParams
	bounds []float64 // per token, one per pass done
	done   bool      // the stopping rule ended the passes
	// tokens is the corpus's, rate its sample's share of the documents
	// (1: not sampled); samplePasses counts the passes on the sample, the
	// first of bounds, and sampleDone says they converged.
	tokens       int64
	rate         float64
	seed         uint64 // the sample's: the spectral fit's seed
	samplePasses int
	sampleDone   bool
	// halfPasses counts the passes on the first half of the sample, the
	// first of the sample's; halfDone says they ended (em_sample.go), and
	// halfUndone that the last one's M-step was undone.
	halfPasses int
	halfDone   bool
	halfUndone bool
	// heldOut is the held-out sample's bound per token before each pass
	// on the sample; prev holds α and the topics before the last M-step
	// on the sample, which undo restores (undone).
	heldOut   []float64
	prevAlpha []float64
	prevBeta  []float64
	undone    bool
	// gain is the sample's prediction of what the passes over every
	// document would add (fullGain; NaN: not measured).
	gain float64
	// resumed is what the checkpoint st was loaded from holds beyond it.
	resumed *emResumed
}

// startHolds reports, after the first M-step on the sample was undone,
// whether EM's start holds: that M-step lowered the held-out bound by less
// than em.Tol relatively, so it measured no gain the stopping rule would
// pass for (on data drawn from LDA the spectral start is where EM ends,
// within a small fraction of that), rather than a sample too small for the
// model, whose M-step would lower it by more.
func (st *emState) startHolds(em EM) bool {
	n := len(st.heldOut)
	if st.samplePasses != 2 || n < 2 {
		return false
	}
	before, after := st.heldOut[n-2], st.heldOut[n-1]
	return (before-after)/math.Abs(before) < em.Tol
}

// holdStart makes EM's start, which held, the refined topics: the
// spectral topics (the start without its uniform mix, startMix) smoothed
// as an M-step would smooth them, the pseudo-count η of every word against
// the topic's expected tokens (the corpus's times α_j/α₀), rather than by
// the start's 1%, which is there to let EM move mass to any word.
func (st *emState) holdStart(em EM) {
	p := &st.params
	k, d := p.K, p.D
	a0 := floats.Sum(p.Alpha)
	for j := range k {
		sum := 0.0
		for w := range d {
			v := max(0, (p.Beta[w*k+j]-startMix/float64(d))/(1-startMix))
			p.Beta[w*k+j] = v
			sum += v
		}
		tj := float64(st.tokens) * p.Alpha[j] / a0
		eps := float64(d) * em.Eta / (tj + float64(d)*em.Eta)
		if !(sum > 0) {
			eps, sum = 1, 1
		}
		for w := range d {
			p.Beta[w*k+j] = (1-eps)*p.Beta[w*k+j]/sum + eps/float64(d)
		}
	}
}

// keepPrev copies the parameters into prev before an M-step on the sample.
func (st *emState) keepPrev() {
	st.prevAlpha = append(st.prevAlpha[:0], st.params.Alpha...)
	st.prevBeta = append(st.prevBeta[:0], st.params.Beta...)
}

// undo restores the parameters before the last M-step on the sample and
// ends the sample's passes.
func (st *emState) undo() {
	copy(st.params.Alpha, st.prevAlpha)
	copy(st.params.Beta, st.prevBeta)
	st.prevAlpha, st.prevBeta = nil, nil
	st.undone, st.sampleDone = true, true
}

// samplePasses is the most passes the cap leaves the sample: room for
// FullPasses passes over every document after them.
func (e EM) samplePasses() int { return e.Passes - max(e.FullPasses, 0) }

// halfPasses is the most of the sample's passes that run on its first
// half: half of them, rounded up (em_sample.go).
func (e EM) halfPasses() int { return (e.samplePasses() + 1) / 2 }

// onHalf reports whether the next pass, on the sample (sampled), runs on
// its first half alone: the half's passes have not ended nor reached
// em.halfPasses, and docs can cut the sample in two.
func (st *emState) onHalf(docs *emDocs, sampled bool, em EM) bool {
	return sampled && !st.halfDone && st.halfPasses < em.halfPasses() && docs.halvable()
}

// keptSteps counts the M-steps on the sample that were kept: a pass that
// found the held-out bound lowered discards the M-step before it (undo
// restores the parameters before that one) and its own.
func (st *emState) keptSteps() int {
	half, whole := st.halfPasses, st.samplePasses-st.halfPasses
	if st.halfUndone {
		half -= 2
	}
	if st.undone {
		whole -= 2
	}
	return max(half, 0) + max(whole, 0)
}

// sampling reports whether the next pass runs on the sample: the corpus is
// sampled, the sample's passes have not converged, and the cap leaves
// room for em.FullPasses passes after it.
func (st *emState) sampling(em EM) bool {
	return st.rate < 1 && !st.sampleDone && len(st.bounds) < em.samplePasses()
}

// refine runs the EM passes of cfg.EM on m (the spectral fit) over src and
// stores the refined topics and weights in m. With release, m's spectral
// topics are dropped once EM's start holds them (Fit's own model, which an
// error discards): a d·k array less during the passes. RefineEM's m is the
// caller's and keeps them until the passes store theirs.
func refine(ctx context.Context, src stream.DocSource, m *models.Model, cfg Config, track *tracker, release bool) error {
	em := cfg.EM.withDefaults()
	if err := em.checkOnline(); err != nil {
		return err
	}
	st := startState(m, em)
	if release {
		m.Topics = nil
	}
	if em.Online {
		return refineOnline(ctx, src, m, st, cfg, em, track)
	}
	ck := newEMCheckpoint(track.ckpt, em)
	if err := resumeEM(ck, track, st, func() (bool, error) { return ck.load(st) }); err != nil {
		return err
	}
	if ck != nil {
		if err := ck.checkVersion(st, em); err != nil {
			return err
		}
	}
	docs := newEMDocs(src, em, st)
	if track.emTap != nil {
		docs.adopt(track.emTap.docs)
		track.emTap = nil
	}
	// One set of statistics serves every pass: a new d·k pair of arrays
	// per pass would leave the last one for the collector, and the heap
	// would grow by it before each collection.
	fresh := NewEMAcc(m.D, m.K)
	var half *EMAcc // the first half of a sample pass from memory
	var warm, heldWarm *warmStarts
	for len(st.bounds) < em.Passes && !st.done {
		fresh.Reset()
		sampled := st.sampling(em)
		// The sample is in memory before the first pass on it: Fit's
		// third-moment pass kept it (emTap); elsewhere (RefineEM, a
		// sweep's sampled model, a resumed fit) one read keeps it, which
		// the pass would otherwise make itself. Every route's passes then
		// run as Fit's, in halves and with warm starts from the first.
		if sampled && !docs.full && !docs.tried {
			if err := stage(ctx, "em-sample-read", docs.gather); err != nil {
				return err
			}
		}
		// The sample's passes start each document's E-step where its last
		// ended (warmStarts), and so do the held-out sample's scores; the
		// checkpoints save both.
		if warm == nil && sampled && docs.full {
			warm, heldWarm = newWarmStarts(docs.batch), newWarmStarts(docs.held)
			if ck != nil {
				if err := ck.restoreWarm(st, warm, heldWarm); err != nil {
					return err
				}
			}
		}
		fresh.warm = nil
		if sampled {
			fresh.warm = warm
		}
		// A pass on the sample in memory runs as its two halves, whose
		// statistics the learning curve compares where the sample's
		// passes end (when passes over every document may follow).
		// The first passes on the sample run on its first half
		// (em_sample.go); the others in two halves.
		onHalf := st.onHalf(docs, sampled, em)
		halves := sampled && !onHalf && docs.full && em.FullGain > 0 && em.FullPasses >= 0
		if halves && half == nil {
			half = NewEMAcc(m.D, m.K)
		}
		pass := track.begin()
		label := StageEM
		switch {
		case onHalf:
			label = StageEMSampleHalf
		case sampled:
			label = StageEMSample
		}
		onBatch := func(n int) { track.report(pass, label, n, false) }
		acc, first, err := runEMPass(ctx, emPassRun{docs: docs, sampled: sampled, onHalf: onHalf, halves: halves, fresh: fresh, half: half, warm: fresh.warm,
			params: &st.params, workers: cfg.Workers, ck: ck, pass: len(st.bounds) + 1, onBatch: onBatch, label: passLabel(pass, label)})
		if err != nil {
			return err
		}
		if halves {
			half = first
		}
		if fresh.warm != nil {
			fresh.warm.swap()
		}
		var worse bool
		if sampled {
			var err error
			if worse, err = st.checkHeldOut(ctx, docs.heldOut(), heldWarm, cfg.Workers); err != nil {
				return err
			}
			if !worse {
				st.keepPrev()
			}
		}
		bound, err := st.step(acc, em, sampled, onHalf)
		if err != nil {
			return err
		}
		switch {
		case worse:
			// Also when the pass converged on the sample: the M-step
			// it ends with is the one that lowered the held-out bound.
			st.undo()
			if st.startHolds(em) {
				st.holdStart(em)
				st.done = true
			} else if onHalf {
				// Too noisy a step from half the sample: the whole
				// sample's passes go on from the parameters before it.
				st.undone, st.sampleDone, st.halfDone, st.halfUndone = false, false, true, true
			}
			st.done = st.done || em.FullPasses < 0
		case !st.sampling(em):
			// The learning curve needs the halves of a pass on the
			// whole sample; without them the passes over every
			// document run.
			if sampled && halves && !st.done {
				if st.gain, err = st.fullGain(ctx, acc, half, em, docs.heldOut(), heldWarm, cfg.Workers); err != nil {
					return err
				}
				// The sample is as good as the corpus for this model.
				st.done = st.gain < em.FullGain
			}
			st.prevAlpha, st.prevBeta, half = nil, nil, nil
		}
		if track.hook != nil {
			track.send(func() Progress {
				return Progress{Pass: pass, Stage: label, Docs: acc.Docs + acc.Empty, Done: true, Bound: bound}
			})
		}
		if ck != nil {
			var next, nextHeld *warmStarts
			if st.sampling(em) {
				next, nextHeld = warm, heldWarm
			}
			if err := ck.save(st, next, nextHeld); err != nil {
				return err
			}
		}
	}
	st.store(m, em, true)
	return nil
}

// emPassRun is one batch EM pass of refine: over the sample (sampled; its
// first half alone when onHalf) or every document, in halves (the first
// half's statistics in half, the whole pass's returned), with the warm starts warm (nil: cold), saving
// and resuming its statistics in ck (nil: none) as pass number pass.
type emPassRun struct {
	docs                    *emDocs
	sampled, onHalf, halves bool
	fresh, half             *EMAcc
	warm                    *warmStarts
	params                  *TopicParams
	workers                 int
	ck                      *emCheckpoint
	pass                    int
	onBatch                 func(int)
	label                   string
}

// runEMPass runs the pass r describes and returns its statistics (r.fresh,
// or those a checkpoint resumed): in halves, those of the sample's second
// half merged with the first's, and the first's (r.half, or those a
// checkpoint resumed). The statistics, and the warm starts written, are
// those of an uninterrupted pass, bit for bit: each batch's depend on the
// parameters and the last pass's starts alone.
func runEMPass(ctx context.Context, r emPassRun) (acc, first *EMAcc, err error) {
	acc, first = r.fresh, r.half
	if r.warm != nil {
		r.warm.begin()
	}
	half := 0
	if r.ck != nil {
		saved, err := r.ck.loadPartial(r.pass, r.halves, r.warm)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case saved == nil:
		case saved.half == 1:
			first, acc, half = saved.first, saved.run, 1
		case r.halves:
			first = saved.run
		default:
			acc = saved.run
		}
	}
	if r.halves && half == 0 && first == r.half {
		first.Reset()
	}
	for _, a := range []*EMAcc{acc, first} {
		if a != nil {
			a.warm = r.warm
		}
	}
	// opt saves the running statistics (those of half i) as the pass goes.
	opt := func(i int, run *EMAcc) implicit.PassOptions {
		if r.ck == nil {
			return implicit.PassOptions{}
		}
		p := emPartialPass{halves: r.halves, half: i, first: first, run: run, warm: r.warm}
		return implicit.PassOptions{Skip: run.Batches, SnapshotEvery: r.ck.every,
			Snapshot: func(int64) error { return r.ck.savePartial(r.pass, p) }}
	}
	err = stage(ctx, r.label, func(ctx context.Context) error {
		if r.onHalf {
			return acc.PassFrom(ctx, r.docs.half(0), r.workers, r.params, r.onBatch, opt(0, acc))
		}
		if !r.halves {
			return acc.PassFrom(ctx, r.docs.pass(r.sampled), r.workers, r.params, r.onBatch, opt(0, acc))
		}
		if half == 0 {
			if err := first.PassFrom(ctx, r.docs.half(0), r.workers, r.params, r.onBatch, opt(0, first)); err != nil {
				return err
			}
		}
		if err := acc.PassFrom(ctx, r.docs.half(1), r.workers, r.params, r.onBatch, opt(1, acc)); err != nil {
			return err
		}
		return acc.Merge(first)
	})
	return acc, first, err
}

// checkHeldOut measures the held-out sample's bound per token under the
// current parameters (held nil: no held-out sample, nothing measured),
// each document's E-step from its warm start in warm (nil: cold), whose
// starts it advances, and reports whether it fell since the pass before,
// when the parameters before the M-step in between are at hand to undo it.
func (st *emState) checkHeldOut(ctx context.Context, held func(context.Context) iter.Seq2[*stream.Docs, error], warm *warmStarts, workers int) (bool, error) {
	if held == nil {
		return false, nil
	}
	var bound float64
	var tokens int64
	if err := stage(ctx, "em-held-out", func(ctx context.Context) (err error) {
		bound, tokens, err = emBound(ctx, held, workers, &st.params, warm, true)
		if err == nil && warm != nil {
			warm.swap()
		}
		return err
	}); err != nil {
		return false, err
	}
	if tokens == 0 {
		return false, nil
	}
	v := bound / float64(tokens)
	n := len(st.heldOut)
	st.heldOut = append(st.heldOut, v)
	return n > 0 && v < st.heldOut[n-1] && st.prevBeta != nil, nil
}

// resumeEM loads the EM state st from the checkpoint ck (none when nil) by
// load, and counts the passes it holds as done.
func resumeEM(ck *emCheckpoint, track *tracker, st *emState, load func() (bool, error)) error {
	if ck == nil {
		return nil
	}
	found, err := load()
	if err != nil || !found {
		return err
	}
	track.mu.Lock()
	track.passes += len(st.bounds)
	track.mu.Unlock()
	return nil
}

// step ends an EM pass whose statistics over all the documents (over the
// sample's, when sampled) are acc: it records the bound of the parameters
// the pass started from, applies the stopping rule (the bound improved by
// less than em.Tol relatively) and the M-step, and returns the bound.
//
// On the sample the rule ends the sample's passes, not EM; the passes
// over every document that follow end after em.FullPasses of them (or
// by the rule between two of them; by the rule alone when the sample's
// first M-step was undone), and the first of them takes a plain
// M-step: its bound is not comparable with the sample's, so nothing says
// an over-relaxed step would not overshoot. A sample's statistics stand
// for the corpus's: the prior pseudo-count η weighs as much as in an
// M-step from the whole corpus (η times the sample's share of the tokens).
//
// On the sample's first half (onHalf) the rule at em.Tol ends the half's
// passes, and the first pass on the whole sample after them is compared
// with none and takes a plain M-step, as the first over every document.
func (st *emState) step(acc *EMAcc, em EM, sampled, onHalf bool) (float64, error) {
	if acc.Tokens == 0 {
		if sampled {
			return 0, fmt.Errorf("lda: EM: the sample of the documents (rate %.3g) has no tokens", st.rate)
		}
		return 0, fmt.Errorf("lda: EM: the source has no tokens")
	}
	eta := em.Eta
	if sampled && st.tokens > 0 {
		eta *= float64(acc.Tokens) / float64(st.tokens)
	}
	bound := (acc.Bound + eta*sumLog(st.params.Beta)) / float64(acc.Tokens)
	conv := false
	// The first pass on the whole sample after its half's.
	afterHalf := sampled && !onHalf && st.halfPasses > 0 && st.samplePasses == st.halfPasses
	if n := len(st.bounds); n > 0 && !afterHalf {
		// A fall after an over-relaxed step is the step's overshoot,
		// which the plain step that follows corrects.
		rel := (bound - st.bounds[n-1]) / math.Abs(st.bounds[n-1])
		tol := em.Tol
		if sampled && !onHalf {
			tol = em.SampleTol
		}
		conv = rel < tol && (rel >= 0 || !st.relaxed(em))
	}
	firstFull := false
	switch {
	case onHalf:
		st.samplePasses++
		st.halfPasses++
		st.halfDone = conv
	case sampled:
		st.samplePasses++
		st.sampleDone = conv
		st.done = conv && em.FullPasses < 0
	case st.rate < 1:
		// After a sample whose first M-step was already undone (it
		// could not improve on the start), the ordinary stopping rule.
		full := len(st.bounds) + 1 - st.samplePasses
		firstFull = full == 1
		gained := !st.undone && !st.halfUndone || st.keptSteps() > 0
		st.done = (gained && full >= em.FullPasses) || (!firstFull && conv)
	default:
		st.done = conv
	}
	st.bounds = append(st.bounds, bound)
	relax := 1.0
	if st.relaxed(em) && !firstFull && !afterHalf {
		relax = em.Relax
	}
	mStep(&st.params, acc, eta, em.FitAlpha, relax)
	return bound, nil
}

// relaxed reports whether the M-step after the passes of st.bounds is
// over-relaxed: for LDA (the relaxation was measured on LDA only), from the
// second pass on, when the last pass raised the bound.
func (st *emState) relaxed(em EM) bool {
	n := len(st.bounds)
	return em.Relax != 1 && !st.params.Single && n >= 2 && st.bounds[n-1] > st.bounds[n-2]
}

// startState smooths the spectral topics into EM's starting point; the
// sample's rate follows from the corpus's tokens (m.Fit.Tokens) and its
// seed is the spectral fit's (m.Fit.Seed), so every process that
// continues m draws the same sample.
func startState(m *models.Model, em EM) *emState {
	k, d := m.K, m.D
	p := TopicParams{K: k, D: d, Alpha: make([]float64, k), Beta: make([]float64, k*d), Single: m.Model == "topic", Tol: em.EStepTol, Prune: em.EStepPrune, Overrelax: em.EStepOverrelax}
	for j, row := range m.Topics {
		for w, v := range row {
			p.Beta[w*k+j] = (1-startMix)*max(v, 0) + startMix/float64(d)
		}
	}
	copy(p.Alpha, m.Alpha)
	asum := 0.0
	for _, a := range p.Alpha {
		asum += max(a, 0)
	}
	if !(asum > 0) || math.IsInf(asum, 0) {
		asum = 1
		for j := range p.Alpha {
			p.Alpha[j] = 1 / float64(k)
		}
	}
	// A weight the spectral fit put at (or below) zero would bar its
	// topic from every document: floor it at a thousandth of the mean.
	for j, a := range p.Alpha {
		p.Alpha[j] = max(a, 1e-3*asum/float64(k))
	}
	if p.Single {
		s := 0.0
		for _, a := range p.Alpha {
			s += a
		}
		for j := range p.Alpha {
			p.Alpha[j] /= s
		}
	}
	return &emState{params: p, tokens: m.Fit.Tokens, rate: emSampleRate(em, d, k, m.Fit.Tokens), seed: m.Fit.Seed, gain: math.NaN()}
}

// mStep sets the topics to the MAP estimate from the expected counts,
// β_wj = (N_wj + η)/(N_j + dη), over-relaxed by relax ≠ 1 (β_old^{1−relax}·
// β_wj^{relax}, each topic normalised), and the weights: the single-topic
// model's to the mean posterior, LDA's α by Minka's fixed point when
// fitAlpha.
func mStep(p *TopicParams, acc *EMAcc, eta float64, fitAlpha bool, relax float64) {
	topicsMAP(p, acc.N, eta, relax)
	if acc.Docs > 0 {
		s := make([]float64, p.K)
		for j := range s {
			s[j] = acc.Suff[j] / float64(acc.Docs)
		}
		setWeights(p, s, fitAlpha)
	}
}

// topicsMAP sets p's topics to the MAP estimate from the expected counts n
// (word-major), β_wj = (n_wj + η)/(n_j + dη), over-relaxed by relax ≠ 1
// (β_old^{1−relax}·β_wj^{relax}, each topic normalised).
func topicsMAP(p *TopicParams, n []float64, eta, relax float64) {
	k, d := p.K, p.D
	tot := make([]float64, k)
	for w := range d {
		for j, v := range n[w*k : (w+1)*k] {
			tot[j] += v
		}
	}
	for j := range tot {
		tot[j] = 1 / (tot[j] + float64(d)*eta)
	}
	if relax == 1 {
		for w := range d {
			row, n := p.Beta[w*k:(w+1)*k], n[w*k:(w+1)*k]
			for j := range row {
				row[j] = (n[j] + eta) * tot[j]
			}
		}
		return
	}
	// β_old^{1−relax}·β^{relax} from the old topics still in p.Beta (for
	// the default 1.5, β·√(β/β_old): no logarithm or exponential); then
	// each topic is normalised.
	norm := make([]float64, k)
	for w := range d {
		row, n := p.Beta[w*k:(w+1)*k], n[w*k:(w+1)*k]
		for j, old := range row {
			b := (n[j] + eta) * tot[j]
			var v float64
			if relax == 1.5 {
				v = b * math.Sqrt(b/old)
			} else {
				v = math.Exp(relax*math.Log(b) + (1-relax)*math.Log(old))
			}
			row[j] = v
			norm[j] += v
		}
	}
	for j := range norm {
		norm[j] = 1 / norm[j]
	}
	for w := range d {
		row := p.Beta[w*k : (w+1)*k]
		for j := range row {
			row[j] *= norm[j]
		}
	}
}

// setWeights sets the weights from their mean sufficient statistics s:
// the single-topic model's to s (the mean posterior), LDA's α by Minka's
// fixed point when fitAlpha.
func setWeights(p *TopicParams, s []float64, fitAlpha bool) {
	switch {
	case p.Single:
		for j := range p.Alpha {
			// A topic no document chose keeps a tiny weight, so the
			// E-step's logarithms stay finite.
			p.Alpha[j] = max(s[j], 1e-12)
		}
	case fitAlpha:
		minkaAlpha(p.Alpha, s)
	}
}

// minkaAlpha maximises Σ_d log Dir(θ_d | α) in expectation, given the mean
// sufficient statistics s_j = E log θ_j, by Minka's fixed point
// ψ(α_j) = ψ(Σα) + s_j (Minka 2000, "Estimating a Dirichlet
// distribution", eq. 9), each step of which increases the objective.
func minkaAlpha(alpha, s []float64) {
	for range 200 {
		a0 := 0.0
		for _, a := range alpha {
			a0 += a
		}
		p0 := digamma(a0)
		change := 0.0
		for j := range alpha {
			a := invDigamma(p0 + s[j])
			change = max(change, math.Abs(a-alpha[j])/alpha[j])
			alpha[j] = a
		}
		if change < 1e-10 {
			return
		}
	}
}

// invDigamma solves ψ(x) = y by Newton's method from Minka's start.
func invDigamma(y float64) float64 {
	x := math.Exp(y) + 0.5
	if y < -2.22 {
		x = -1 / (y + 0.5772156649015329)
	}
	for range 6 {
		x -= (digamma(x) - y) / trigamma(x)
	}
	return x
}

// trigamma is ψ'(x) for x > 0: the recurrence ψ'(x) = ψ'(x+1) + 1/x² up to
// x ≥ 6, then the asymptotic series.
func trigamma(x float64) float64 {
	r := 0.0
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	return r + 1/x + f/2 + f/x*(1.0/6+f*(-1.0/30+f*(1.0/42+f*(-1.0/30))))
}

// sumLog is Σ log v over v > 0 (finite): the binary exponents summed and
// one logarithm of the product of the mantissas (each in [1, 2)) per 512
// of them, before the product could overflow.
func sumLog(v []float64) float64 {
	const expMask, bias = 0x7ff, 1023
	s, exps := 0.0, 0
	for len(v) > 0 {
		chunk := v[:min(len(v), 512)]
		v = v[len(chunk):]
		prod := 1.0
		for _, x := range chunk {
			b := math.Float64bits(x)
			e := int(b>>52) & expMask
			if e == 0 { // subnormal
				s += math.Log(x)
				continue
			}
			exps += e - bias
			prod *= math.Float64frombits(b&^(expMask<<52) | bias<<52)
		}
		s += math.Log(prod)
	}
	return s + float64(exps)*math.Ln2
}

// store writes the refined parameters into m, with sorted topics in order
// of decreasing weight (the refined model), else in the order EM keeps
// them (a model between passes, which emStateOf reads back exactly), and
// records the passes.
func (st *emState) store(m *models.Model, em EM, sorted bool) {
	p := &st.params
	k, d := p.K, p.D
	order := make([]int, k)
	for j := range order {
		order[j] = j
	}
	if sorted {
		sort.SliceStable(order, func(a, b int) bool { return p.Alpha[order[a]] > p.Alpha[order[b]] })
	}
	m.Alpha = make([]float64, k)
	m.Topics = make([][]float64, k)
	for i, j := range order {
		m.Alpha[i] = p.Alpha[j]
		row := make([]float64, d)
		for w := range d {
			row[w] = p.Beta[w*k+j]
		}
		m.Topics[i] = row
	}
	if !p.Single {
		m.Alpha0 = 0
		for _, a := range m.Alpha {
			m.Alpha0 += a
		}
	}
	m.Fit.EM = &models.EMStats{Passes: len(st.bounds), Bounds: st.bounds, Converged: st.done, Tol: em.Tol, FitAlpha: em.FitAlpha || p.Single, Eta: em.Eta}
	emRecordSample(m.Fit.EM, st)
}
