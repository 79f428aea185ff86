package lda

import (
	"context"
	"iter"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"golang.org/x/sync/errgroup"
)

// refineAll runs the EM passes of cfg.EM on every model of ms (the
// spectral fits of FitK) over src, as refine would one at a time, and
// reports which of them shared their reads: the batch passes over every
// document (no sample: the corpus has at most EM.Sample tokens for the
// model's d·k) run together, each read of the documents serving every
// model still refining (sharedEM); the others (a sampled corpus, online
// EM) take refine's passes, one model after another.
func refineAll(ctx context.Context, src stream.DocSource, ms []*models.Model, cfg Config, track *tracker, onEM func(k, pass int, bound float64)) ([]bool, error) {
	shared := make([]bool, len(ms))
	if cfg.EM.Passes <= 0 {
		return shared, nil
	}
	em := cfg.EM.withDefaults()
	if err := em.checkOnline(); err != nil {
		return nil, err
	}
	var group []*models.Model
	var states []*emState
	for i, m := range ms {
		st := startState(m, em)
		if em.Online || st.rate < 1 {
			continue
		}
		shared[i] = true
		group = append(group, m)
		states = append(states, st)
	}
	err := stage(ctx, "em", func(ctx context.Context) error {
		if err := sharedEM(ctx, src, group, states, cfg, em, track, onEM); err != nil {
			return err
		}
		for i, m := range ms {
			if shared[i] {
				continue
			}
			track.k = m.K
			err := refine(ctx, src, m, cfg, track, true)
			track.k = 0
			if err != nil {
				return err
			}
			if onEM != nil && m.Fit.EM != nil {
				for p, b := range m.Fit.EM.Bounds {
					onEM(m.K, p+1, b)
				}
			}
		}
		return nil
	})
	return shared, err
}

// sharedEM runs the batch EM passes of the models ms from their states
// (startState; none sampled) together: every pass reads the documents once
// (from memory after the first, as refine's emDocs keeps them) and serves
// each batch to the passes of the models still refining, which run
// concurrently, each on cfg.Workers goroutines with its own statistics
// (EMAcc, exact sums: the same totals as a pass of its own). After
// the pass each model takes its M-step and its stopping rule (emState.step);
// a model that stopped is no longer computed. The refined parameters are
// stored in the models as refine stores them.
func sharedEM(ctx context.Context, src stream.DocSource, ms []*models.Model, states []*emState, cfg Config, em EM, track *tracker, onEM func(k, pass int, bound float64)) error {
	if len(ms) == 0 {
		return nil
	}
	// One copy of the documents serves every model: the largest model's
	// allowance of entries in memory (emDocs.limit) is the largest.
	big := 0
	for i, st := range states {
		if st.params.K > states[big].params.K {
			big = i
		}
		ms[i].Topics = nil // the start holds them
	}
	docs := newEMDocs(src, em, states[big])
	read := docs.pass(false)
	if docs.limit == 0 {
		// No copy is kept (sampling is off): the passes read the source's
		// own batches, which go back to its free list when every model has
		// taken them (teePass), rather than a copy of each per pass.
		read = src.Docs
	}
	accs := make([]*EMAcc, len(ms))
	for i, m := range ms {
		accs[i] = NewEMAcc(m.D, m.K)
	}
	active := func() []int {
		var a []int
		for i, st := range states {
			if len(st.bounds) < em.Passes && !st.done {
				a = append(a, i)
			}
		}
		return a
	}
	for run := active(); len(run) > 0; run = active() {
		pass := track.begin()
		label := passLabel(pass, StageEM)
		err := stage(ctx, label, func(ctx context.Context) error {
			return teePass(ctx, read, len(run), func(ctx context.Context, r int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error {
				i := run[r]
				accs[i].Reset()
				var onBatch func(int)
				if r == 0 {
					onBatch = func(n int) { track.report(pass, StageEM, n, false) }
				}
				return accs[i].Pass(ctx, batches, cfg.Workers, &states[i].params, onBatch)
			})
		})
		if err != nil {
			return err
		}
		for _, i := range run {
			bound, err := states[i].step(accs[i], em, false, false)
			if err != nil {
				return err
			}
			if track.hook != nil {
				acc := accs[i]
				track.send(func() Progress {
					return Progress{Pass: pass, Stage: StageEM, Docs: acc.Docs + acc.Empty, Done: true, Bound: bound, K: ms[i].K}
				})
			}
			if onEM != nil {
				onEM(ms[i].K, len(states[i].bounds), bound)
			}
		}
	}
	for i, st := range states {
		st.store(ms[i], em, true)
	}
	return nil
}

// teePass reads docs once and runs n passes over it concurrently, run(i,
// batches) for i = 0..n−1, each seeing every batch of docs in order as a
// view of its own (stream.Docs.Share): a batch goes back to its source's
// pool or free list when every pass has released its view. The first error
// ends all of them and is returned.
func teePass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], n int,
	run func(ctx context.Context, i int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error) error {
	g, gctx := errgroup.WithContext(ctx)
	chans := make([]chan *stream.Docs, n)
	for i := range chans {
		chans[i] = make(chan *stream.Docs, teeBuffer)
	}
	g.Go(func() error {
		defer func() {
			for _, c := range chans {
				close(c)
			}
		}()
		for b, err := range docs(gctx) {
			if err != nil {
				return err
			}
			for i, v := range b.Share(n) {
				select {
				case chans[i] <- v:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
		}
		return nil
	})
	for i := range n {
		g.Go(func() error {
			// Drain what the pass left (it stopped early, or failed), so
			// the reader never waits on it.
			defer func() {
				for b := range chans[i] {
					b.Release()
				}
			}()
			return run(gctx, i, func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
				return func(yield func(*stream.Docs, error) bool) {
					for b := range chans[i] {
						if err := ctx.Err(); err != nil {
							yield(nil, err)
							return
						}
						if !yield(b, nil) {
							return
						}
					}
				}
			})
		})
	}
	return g.Wait()
}

// teeBuffer is the batches a pass of teePass may fall behind the reader.
const teeBuffer = 2
