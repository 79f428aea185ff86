package implicit

import (
	"context"
	"iter"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

// sequencer lets concurrent workers take turns in a fixed order: turn i
// begins once turns 0..i−1 have ended.
type sequencer struct {
	mu   sync.Mutex
	next int
	ch   chan struct{} // closed (and replaced) whenever next advances
}

// wait blocks until it is turn i, or ctx ends.
func (s *sequencer) wait(ctx context.Context, i int) error {
	for {
		s.mu.Lock()
		if s.ch == nil {
			s.ch = make(chan struct{})
		}
		if s.next == i {
			s.mu.Unlock()
			return nil
		}
		ch := s.ch
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// done ends the current turn.
func (s *sequencer) done() {
	s.mu.Lock()
	s.next++
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
	s.mu.Unlock()
}

// ordered runs one pass over docs with workers goroutines. Each batch is
// reduced by one worker into that worker's partial (made by newPart;
// compute runs concurrently), and partials are added to the running totals
// by commit strictly in batch order, after which onBatch (if set) is told
// the batch's size. Floating-point sums therefore happen in one order
// whatever the number of workers, and the totals are bit-identical for any
// workers, at the price of one partial per worker. Batch i goes to worker
// i mod workers (stream.Each's fixed assignment), which is how a worker
// knows its turn. With a fold (Exact.Pass), each commit folds its partials
// into exact totals (addTotal; commit must be given the fold too).
func ordered[P any](ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int,
	newPart func() P, compute func(P, *stream.Docs), commit func(P), onBatch func(docs int), fold *batchFold) error {
	workers = max(1, workers)
	parts := make([]P, workers)
	for i := range parts {
		parts[i] = newPart()
	}
	var (
		seq  sequencer
		pass context.Context // stream.Each's context: cancelled when any goroutine fails
	)
	wrapped := func(c context.Context) iter.Seq2[*stream.Docs, error] {
		pass = c // set before the first batch is sent, so workers see it
		return docs(c)
	}
	seen := make([]int, workers)
	return stream.Each(ctx, wrapped, workers, func(w int, b *stream.Docs) error {
		turn := seen[w]*workers + w
		seen[w]++
		compute(parts[w], b)
		if err := seq.wait(pass, turn); err != nil {
			return err
		}
		commit(parts[w])
		if fold != nil {
			if err := fold.after(); err != nil {
				return err
			}
		}
		if onBatch != nil {
			onBatch(b.Len())
		}
		seq.done()
		return nil
	})
}

// InOrderN runs compute(w, i) for i = 0..n−1 on workers goroutines (item
// i on worker i mod workers) and commit(w, i) strictly in order of i, for
// reductions over fixed pieces (held in memory) whose sum must not depend
// on workers: compute fills worker w's scratch, commit adds it.
func InOrderN(n, workers int, compute, commit func(w, i int)) {
	workers = max(1, min(workers, n))
	var (
		seq sequencer
		wg  sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				compute(w, i)
				seq.wait(context.Background(), i)
				commit(w, i)
				seq.done()
			}
		}()
	}
	wg.Wait()
}

// InOrder runs one pass over docs with workers goroutines as the
// accumulators' passes do: compute reduces each batch into its worker's
// part (made by newPart) concurrently, and commit takes the parts strictly
// in batch order, so what commit does (sum, write out) does not depend on
// workers. The first error of the source or of commit ends the pass and is
// returned. A batch stays valid until its commit has returned.
func InOrder[P any](ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int,
	newPart func() P, compute func(P, *stream.Docs), commit func(P) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var failed error
	err := ordered(ctx, docs, workers, newPart, compute, func(p P) {
		if failed != nil {
			return
		}
		if failed = commit(p); failed != nil {
			cancel()
		}
	}, nil, nil)
	if failed != nil {
		return failed
	}
	return err
}

// SplitBatches yields docs' batches cut into pieces of whole documents of
// at most about maxEntries entries each (a longer document is a piece
// alone), copied into pooled batches; the pieces depend only on the
// batches, not on the workers. A pass over few large batches then keeps
// every worker busy.
func SplitBatches(docs func(context.Context) iter.Seq2[*stream.Docs, error], maxEntries int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			for b, err := range docs(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				if b.NNZ() <= maxEntries {
					if !yield(b, nil) {
						return
					}
					continue
				}
				// Equal pieces rather than full ones and a remainder.
				pieces := (b.NNZ() + maxEntries - 1) / maxEntries
				per := (b.NNZ() + pieces - 1) / pieces
				for lo := 0; lo < b.Len(); {
					hi := lo + 1
					for hi < b.Len() && b.Offsets[hi+1]-b.Offsets[lo] <= per {
						hi++
					}
					p := stream.NewDocs(b.Start + int64(lo))
					n := b.Offsets[hi] - b.Offsets[lo]
					p.Reserve(n, n)
					for i := lo; i < hi; i++ {
						p.AppendDoc(b.Doc(i))
					}
					lo = hi
					if !yield(p, nil) {
						b.Release()
						return
					}
				}
				b.Release()
			}
		}
	}
}
