package stream

import (
	"context"
	"iter"

	core "github.com/streamfit/streamfit/internal/stream"
)

// Progress counts rows and bytes read by a pass. It is safe for concurrent use
// and a nil *Progress ignores every call.
type Progress = core.Progress

// NewProgress starts a progress counter; total is the expected number of bytes
// (0 when unknown), used for the ETA.
func NewProgress(total int64) *Progress { return core.NewProgress(total) }

// ProgressWriter advances P (nil is fine) by the bytes written to W.
type ProgressWriter = core.ProgressWriter

// CountingReader counts the bytes read through it.
type CountingReader = core.CountingReader

// Each consumes a pass with workers goroutines: batch number i goes to worker
// i mod workers, which calls fn(worker, batch) and then releases the batch, so
// per-worker accumulators merged in worker order give bit-identical sums on
// every run with the same number of workers.
func Each[B Releaser](ctx context.Context, seq func(context.Context) iter.Seq2[B, error], workers int, fn func(worker int, b B) error) error {
	return core.Each(ctx, seq, workers, fn)
}

// Ordered runs one parallel decoding pass and yields the results in the order
// split produced the work; decode runs on up to workers goroutines, with at
// most 2×workers items in flight.
func Ordered[W, R any](ctx context.Context, workers int,
	split func(ctx context.Context, emit func(W) bool) error,
	decode func(ctx context.Context, w W) (R, error),
	release func(R)) iter.Seq2[R, error] {
	return core.Ordered(ctx, workers, split, decode, release)
}

// OrderedBudget runs one parallel decoding pass in which a work item decodes
// into a sequence of results, in order, holding at most budget bytes and
// ResultSlots(workers) results at once.
func OrderedBudget[W, R any](ctx context.Context, workers int, budget int64,
	split func(ctx context.Context, emit func(w W, size int64) bool) error,
	decode func(ctx context.Context, w W, emit func(r R, size int64) bool) error,
	release func(R)) iter.Seq2[R, error] {
	return core.OrderedBudget(ctx, workers, budget, split, decode, release)
}

// ResultSlots is the most results an OrderedBudget pass with the given number
// of workers holds at once.
func ResultSlots(workers int) int { return core.ResultSlots(workers) }

// DefaultInflightBytes is the byte budget of a pass when Options.InflightBytes
// is unset.
const DefaultInflightBytes = core.DefaultInflightBytes

// Recycler keeps the values one pass releases and hands them out again,
// oldest released first, so a pass reuses a fixed set of values.
type Recycler[T any] = core.Recycler[T]
