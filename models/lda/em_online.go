package lda

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// Online (stepwise) EM, EM.Online: the passes read the documents in
// mini-batches of EM.MiniBatch consecutive documents and take an M-step
// after each (Cappé and Moulines 2009; Liang and Klein 2009, "Online EM for
// unsupervised models"; the M-step of the online variational Bayes of
// Hoffman, Blei and Bach 2010, which gensim runs). The t-th mini-batch B
// (t from 1, counted over all passes) is E-stepped with the current topics
// and α, its documents in parallel and their expected counts ŝ_B summed
// exactly (EMAcc), and the running statistics move towards it:
//
//	s ← (1−ρ_t)·s + ρ_t·(T/T_B)·ŝ_B,   ρ_t = (τ₀+t)^−κ,
//
// T the corpus's tokens (the spectral fit's count) and T_B the
// mini-batch's, so s always stands for the whole corpus; the topics are
// then β_wj = (s_wj+η)/(Σ_w s_wj + dη), the batch M-step's MAP estimate
// (never over-relaxed). α follows the running mean of the weights'
// statistics the same way, by Minka's fixed point after every mini-batch
// (FitAlpha; the single-topic model's weights are that mean). Before the
// first mini-batch, s holds the smoothed spectral topics scaled by T·α_j/α₀
// (they weigh (1−ρ₁) in the first step) and the first E-step uses those
// topics themselves.
//
// The pass's training bound is the sum of the mini-batches' bounds, each
// under the parameters it was E-stepped with, plus the topics' log prior
// at the end of the pass, per token; the stopping rule reads its relative
// change between passes as the batch passes do. Mini-batches are cut at
// fixed document numbers and each one's statistics are exact sums, so the
// model is the same bytes whatever the number of workers (or the source's
// batch size). Memory: the running statistics, the topics and one
// mini-batch's statistics, each d·k, and the documents of two
// mini-batches (one read ahead).
//
// A checkpoint saves the state after every pass (the running statistics,
// α and the step count); a pass interrupted part-way is read again from
// its start, which gives the same model as an uninterrupted fit.

// Defaults of online EM (EM.Online): the mini-batch, and the step size
// ρ_t = (τ₀ + t)^(−κ) of its t-th mini-batch. τ₀ trades held-out
// perplexity against topic diversity: a τ₀ of about the mini-batches in a
// pass keeps the first steps from outweighing the spectral start and
// lowers the perplexity, τ₀ 1 keeps the higher diversity online EM is
// offered for.
const (
	DefaultMiniBatch = 1024
	DefaultKappa     = 0.7
	DefaultTau0      = 1.0
	// onlineChunk is the documents per unit of work within a mini-batch
	// (the unit the workers take turns on; the statistics do not depend
	// on it).
	onlineChunk = 128
)

// checkOnline validates the online step-size settings of e (after
// withDefaults).
func (e EM) checkOnline() error {
	if !e.Online {
		return nil
	}
	if !(e.Kappa > 0.5 && e.Kappa <= 1) {
		return fmt.Errorf("lda: online EM's step-size exponent κ is %g; it must be in (0.5, 1]", e.Kappa)
	}
	if !(e.Tau0 >= 0) || math.IsInf(e.Tau0, 0) {
		return fmt.Errorf("lda: online EM's step-size delay τ₀ is %g; it must be finite and ≥ 0", e.Tau0)
	}
	if e.MiniBatch < 1 {
		return fmt.Errorf("lda: online EM's mini-batch has %d documents; it needs at least 1", e.MiniBatch)
	}
	return nil
}

// onlineState is the state of online EM between mini-batches.
type onlineState struct {
	*emState
	s     []float64 // running expected counts, word-major (d·k)
	sa    []float64 // running mean of the weights' statistics (k)
	t     int64     // mini-batches done
	total float64   // tokens the running statistics stand for
	// counting: the model did not say its tokens (not from Fit), and
	// total counts those read so far in the first pass.
	counting bool
}

// newOnlineState is online EM's start from start, the spectral fit's
// (startState), whose model counted tokens (0: unknown).
func newOnlineState(start *emState, tokens int64) *onlineState {
	st := &onlineState{emState: start, total: float64(tokens), counting: tokens <= 0}
	p := &st.params
	k := p.K
	st.s = make([]float64, len(p.Beta))
	st.sa = make([]float64, k)
	a0 := 0.0
	for _, a := range p.Alpha {
		a0 += a
	}
	for w := range p.D {
		row, s := p.Beta[w*k:(w+1)*k], st.s[w*k:(w+1)*k]
		for j, b := range row {
			s[j] = b * st.total * p.Alpha[j] / a0
		}
	}
	for j, a := range p.Alpha {
		if p.Single {
			st.sa[j] = a
		} else {
			st.sa[j] = digamma(a) - digamma(a0)
		}
	}
	return st
}

// refineOnline runs online EM passes (EM.Online) on m over src from start,
// the spectral fit's.
func refineOnline(ctx context.Context, src stream.DocSource, m *models.Model, start *emState, cfg Config, em EM, track *tracker) error {
	st := newOnlineState(start, m.Fit.Tokens)
	ck := newEMCheckpoint(track.ckpt, em)
	if err := resumeEM(ck, track, st.emState, func() (bool, error) { return ck.loadOnline(st, em) }); err != nil {
		return err
	}
	acc := NewEMAcc(m.D, m.K)
	for len(st.bounds) < em.Passes && !st.done {
		pass := track.begin()
		label := StageEM
		var bound float64
		if err := stage(ctx, passLabel(pass, label), func(ctx context.Context) error {
			var err error
			bound, err = st.pass(ctx, src, acc, cfg.Workers, em, func(n int) { track.report(pass, label, n, false) })
			return err
		}); err != nil {
			return err
		}
		if track.hook != nil {
			track.send(func() Progress {
				return Progress{Pass: pass, Stage: label, Docs: track.docs, Done: true, Bound: bound}
			})
		}
		if ck != nil {
			if err := ck.saveOnline(st); err != nil {
				return err
			}
		}
	}
	st.store(m, em, true)
	m.Fit.EM.Online = true
	return nil
}

// pass runs one online pass over src: a mini-batch at a time, the E-step
// then the step of the running statistics and the M-step. It records the
// pass's bound, applies the stopping rule and returns the bound.
func (st *onlineState) pass(ctx context.Context, src stream.DocSource, acc *EMAcc, workers int, em EM, onBatch func(int)) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches, errc := miniBatches(ctx, src, em.MiniBatch)
	var bound float64
	var tokens int64
	for mb := range batches {
		acc.Reset()
		err := acc.Pass(ctx, chunkSeq(mb.all[:mb.n]), workers, &st.params, nil)
		if err == nil {
			err = st.step(acc, em)
		}
		mb.done <- struct{}{}
		if err != nil {
			return 0, err
		}
		bound += acc.Bound
		tokens += acc.Tokens
		onBatch(mb.docs)
	}
	if err := <-errc; err != nil {
		return 0, err
	}
	if tokens == 0 {
		return 0, fmt.Errorf("lda: EM: the source has no tokens")
	}
	st.counting = false
	bound = (bound + em.Eta*sumLog(st.params.Beta)) / float64(tokens)
	if n := len(st.bounds); n > 0 {
		rel := (bound - st.bounds[n-1]) / math.Abs(st.bounds[n-1])
		st.done = rel < em.Tol
	}
	st.bounds = append(st.bounds, bound)
	return bound, nil
}

// step moves the running statistics towards those of one mini-batch (acc)
// and sets the topics and weights from them.
func (st *onlineState) step(acc *EMAcc, em EM) error {
	if acc.Tokens == 0 {
		return nil // a mini-batch of empty documents says nothing
	}
	if st.counting {
		// A model without the corpus's token count (not from Fit): the
		// statistics stand for the tokens read so far.
		st.total += float64(acc.Tokens)
	}
	st.t++
	rho := math.Pow(em.Tau0+float64(st.t), -em.Kappa)
	keep, scale := 1-rho, rho*st.total/float64(acc.Tokens)
	for i, v := range acc.N {
		st.s[i] = keep*st.s[i] + scale*v
	}
	for j, v := range acc.Suff {
		st.sa[j] = keep*st.sa[j] + rho*v/float64(acc.Docs)
	}
	topicsMAP(&st.params, st.s, em.Eta, 1)
	setWeights(&st.params, st.sa, em.FitAlpha)
	return nil
}

// miniBatch is the documents of one mini-batch, in chunks of onlineChunk
// (all[:n]); the reader reuses them once done is sent.
type miniBatch struct {
	all  []*stream.Docs
	n    int
	docs int
	done chan struct{}
}

// add appends a document (number start in the source) to the mini-batch.
func (mb *miniBatch) add(start int64, terms, counts []int32) {
	if mb.n == 0 || mb.all[mb.n-1].Len() == onlineChunk {
		if mb.n == len(mb.all) {
			mb.all = append(mb.all, &stream.Docs{})
		}
		mb.all[mb.n].Reset(start)
		mb.n++
	}
	mb.all[mb.n-1].AppendDoc(terms, counts)
	mb.docs++
}

// miniBatches reads src in a goroutine into mini-batches of size
// consecutive documents (the last may be smaller), one read ahead of the
// one being used; after the channel closes, errc holds the source's error
// (or nil).
func miniBatches(ctx context.Context, src stream.DocSource, size int) (<-chan *miniBatch, <-chan error) {
	out := make(chan *miniBatch)
	errc := make(chan error, 1)
	go func() {
		defer close(out)
		// Two mini-batches' buffers alternate: one filled while the other
		// is E-stepped.
		bufs := [2]*miniBatch{{done: make(chan struct{}, 1)}, {done: make(chan struct{}, 1)}}
		bufs[1].done <- struct{}{}
		which := 0
		send := func() bool {
			select {
			case out <- bufs[which]:
			case <-ctx.Done():
				return false
			}
			which = 1 - which
			select {
			case <-bufs[which].done: // the mini-batch before is E-stepped
			case <-ctx.Done():
				return false
			}
			bufs[which].n, bufs[which].docs = 0, 0
			return true
		}
		for b, err := range src.Docs(ctx) {
			if err != nil {
				errc <- err
				return
			}
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				bufs[which].add(b.Start+int64(i), terms, counts)
				if bufs[which].docs == size && !send() {
					b.Release()
					errc <- ctx.Err()
					return
				}
			}
			b.Release()
		}
		if bufs[which].docs > 0 && !send() {
			errc <- ctx.Err()
			return
		}
		errc <- ctx.Err()
	}()
	return out, errc
}

// chunkSeq is a pass over chunks.
func chunkSeq(chunks []*stream.Docs) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	}
}
