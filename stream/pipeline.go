package stream

import (
	"context"
	"iter"

	"golang.org/x/sync/errgroup"
)

// Ordered runs one parallel decoding pass and yields the results in the order the
// work was produced. split runs on its own goroutine and emits work items in order
// (raw byte chunks, row-group indices, ...) until emit returns false; decode runs
// on up to workers goroutines. At most 2×workers items are in flight, which bounds
// memory. Breaking out of the loop or cancelling ctx stops every goroutine before
// the iterator returns; results never yielded are passed to release (if non-nil).
// The first error, in stream order, is yielded once and ends the pass. A
// panic in split or decode is such an error (a *PanicError, see Safe).
func Ordered[W, R any](ctx context.Context, workers int,
	split func(ctx context.Context, emit func(W) bool) error,
	decode func(ctx context.Context, w W) (R, error),
	release func(R)) iter.Seq2[R, error] {
	if workers < 1 {
		workers = 1
	}
	type result struct {
		r   R
		err error
	}
	type job struct {
		w   W
		out chan result
	}
	return func(yield func(R, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		jobs := make(chan job)
		order := make(chan chan result, 2*workers)
		var g errgroup.Group
		g.Go(func() error {
			defer close(jobs)
			defer close(order)
			err := Safe(func() error {
				return split(ctx, func(w W) bool {
					out := make(chan result, 1)
					select {
					case order <- out:
					case <-ctx.Done():
						return false
					}
					select {
					case jobs <- job{w, out}:
						return true
					case <-ctx.Done():
						out <- result{err: ctx.Err()}
						return false
					}
				})
			})
			if err != nil {
				out := make(chan result, 1)
				out <- result{err: err}
				select {
				case order <- out:
				case <-ctx.Done():
				}
			}
			return nil
		})
		for range workers {
			g.Go(func() error {
				for j := range jobs {
					if ctx.Err() != nil {
						j.out <- result{err: ctx.Err()}
						continue
					}
					var r R
					err := Safe(func() (err error) { r, err = decode(ctx, j.w); return err })
					j.out <- result{r, err}
				}
				return nil
			})
		}
		drain := func() {
			cancel()
			for out := range order {
				if res := <-out; res.err == nil && release != nil {
					release(res.r)
				}
			}
			g.Wait()
		}
		for out := range order {
			res := <-out
			if res.err != nil {
				yield(res.r, res.err)
				drain()
				return
			}
			if !yield(res.r, nil) {
				drain()
				return
			}
		}
		g.Wait()
		if err := ctx.Err(); err != nil {
			var zero R
			yield(zero, err)
		}
	}
}
