package stream

import (
	"context"
	"iter"

	"golang.org/x/sync/errgroup"
)

// Releaser is a batch that can hand its memory back to its source.
type Releaser interface{ Release() }

// Each consumes a pass with workers goroutines: batch number i (counting from 0)
// goes to worker i mod workers, which calls fn(worker, batch) and then releases
// the batch. The fixed assignment makes per-worker accumulators, merged in worker
// order, give bit-identical sums on every run with the same number of workers.
// The first error from the pass or from fn stops everything and is returned.
func Each[B Releaser](ctx context.Context, seq func(context.Context) iter.Seq2[B, error], workers int, fn func(worker int, b B) error) error {
	if workers < 1 {
		workers = 1
	}
	g, ctx := errgroup.WithContext(ctx)
	chans := make([]chan B, workers)
	for w := range chans {
		chans[w] = make(chan B, 1)
	}
	for w := range chans {
		g.Go(func() error {
			for b := range chans[w] {
				err := fn(w, b)
				b.Release()
				if err != nil {
					return err // cancels the pass; unread batches go to the GC
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer func() {
			for _, c := range chans {
				close(c)
			}
		}()
		i := 0
		for b, err := range seq(ctx) {
			if err != nil {
				return err
			}
			select {
			case chans[i%workers] <- b:
			case <-ctx.Done():
				b.Release()
				return ctx.Err()
			}
			i++
		}
		return nil
	})
	return g.Wait()
}
