package stream

import (
	"context"
	"iter"
	"sync"
)

// DefaultInflightBytes is the byte budget of a pass when Options.InflightBytes
// is unset: decoded batches waiting for the consumer (and raw work items read
// ahead) hold at most about this much memory, whatever the size of the file's
// row groups or record batches.
const DefaultInflightBytes = 8 << 20

// minResultSize is what a result counts against the budget at least, so that
// the number of queued results is bounded too.
const minResultSize = 4 << 10

// ResultSlots is the most results an OrderedBudget pass with the given
// number of workers holds at once, from the moment a worker starts decoding
// one until the consumer takes it: one being decoded per worker and as many
// again (plus one) decoded ahead. A pass that takes its batches from a
// FreeList made by NewFreeList(ResultSlots(workers)+1) (the one more is the
// batch the consumer holds) then never allocates another, so its memory is
// set by its first few batches however long it runs.
func ResultSlots(workers int) int { return 2*max(workers, 1) + 1 }

// OrderedBudget runs one parallel decoding pass in which a work item decodes
// into a sequence of results (a Parquet row group into batches of a few
// thousand documents, say). split emits the work items in order, each with
// the bytes it holds until decoded (0 when it holds nothing, like a row-group
// index); decode runs on up to workers goroutines and hands each result to
// emit with its size in bytes. Results come out in item order, and in emit
// order within an item.
//
// Memory is bounded by bytes and by count. Bytes: emit blocks while the
// results produced but not yet taken by the consumer, plus the work items
// read ahead, would exceed budget. Count: at most ResultSlots(workers)
// results exist at once, counted from the moment a worker starts decoding
// one (when it starts an item, and when emit returns for the next) until the
// consumer takes it; emit waits for a slot before returning. The count makes
// the set of batches a pass needs fixed, instead of depending on how busy the
// pass happened to get (see ResultSlots). The item the consumer is waiting
// for may always queue two results, and one slot is kept for it whenever it
// holds none, so a pass never deadlocks, and a single result larger than the
// budget goes through alone. When emit returns false the pass is stopping:
// decode should return (a result not queued has been released).
//
// Breaking out of the loop or cancelling ctx stops every goroutine before the
// iterator returns; results never yielded are passed to release (if non-nil).
// The first error, in stream order, is yielded once after the results that
// precede it and ends the pass. A panic in split or decode is such an error
// (a *PanicError, see Safe).
func OrderedBudget[W, R any](ctx context.Context, workers int, budget int64,
	split func(ctx context.Context, emit func(w W, size int64) bool) error,
	decode func(ctx context.Context, w W, emit func(r R, size int64) bool) error,
	release func(R)) iter.Seq2[R, error] {
	workers = max(workers, 1)
	if budget <= 0 {
		budget = DefaultInflightBytes
	}
	return func(yield func(R, error) bool) {
		parent := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		q := newBudgetQueue[W, R](budget, 2*workers+1, ResultSlots(workers))
		stopWatch := context.AfterFunc(ctx, q.stop)
		defer stopWatch()

		jobs := make(chan *budgetJob[W, R])
		var wg sync.WaitGroup
		wg.Go(func() {
			defer close(jobs)
			err := Safe(func() error {
				return split(ctx, func(w W, size int64) bool {
					j := q.admit(w, size)
					if j == nil {
						return false
					}
					select {
					case jobs <- j:
						return true
					case <-ctx.Done():
						q.finish(j, ctx.Err())
						return false
					}
				})
			})
			q.splitDone(err)
		})
		for range workers {
			wg.Go(func() {
				for j := range jobs {
					q.decode(ctx, j, decode, release)
				}
			})
		}
		shutdown := func() {
			q.stop()
			cancel()
			wg.Wait()
			if release != nil {
				for _, r := range q.leftovers() {
					release(r)
				}
			}
		}
		for {
			r, err, ok := q.next()
			if !ok {
				break
			}
			if err != nil {
				shutdown()
				yield(r, err)
				return
			}
			if !yield(r, nil) {
				shutdown()
				return
			}
		}
		shutdown()
		if err := parent.Err(); err != nil {
			var zero R
			yield(zero, err)
		}
	}
}

// budgetJob is one work item and the results it has produced so far.
type budgetJob[W, R any] struct {
	w       W
	size    int64 // bytes w holds until decoded
	results []sized[R]
	held    bool // holds a slot for the result being decoded
	done    bool
	err     error
}

type sized[R any] struct {
	r    R
	size int64
}

// budgetQueue is the state an OrderedBudget pass shares between its
// goroutines: the items in stream order (order[0] is the one the consumer
// reads next) and the bytes they hold.
type budgetQueue[W, R any] struct {
	mu       sync.Mutex
	cond     sync.Cond
	budget   int64
	used     int64
	maxJobs  int
	slots    int // results allowed at once (ResultSlots)
	inUse    int // results being decoded or queued
	order    []*budgetJob[W, R]
	stopped  bool
	split    bool // split has returned
	splitErr error
}

func newBudgetQueue[W, R any](budget int64, maxJobs, slots int) *budgetQueue[W, R] {
	q := &budgetQueue[W, R]{budget: budget, maxJobs: maxJobs, slots: max(slots, 1)}
	q.cond.L = &q.mu
	return q
}

// fits reports whether size more bytes stay within the budget; anything fits
// when nothing is held.
func (q *budgetQueue[W, R]) fits(size int64) bool {
	return q.used == 0 || q.used+size <= q.budget
}

// admit waits for room for a new work item and appends it to the order; nil
// means the pass is stopping.
func (q *budgetQueue[W, R]) admit(w W, size int64) *budgetJob[W, R] {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && (len(q.order) >= q.maxJobs || !q.fits(size)) {
		q.cond.Wait()
	}
	if q.stopped {
		return nil
	}
	j := &budgetJob[W, R]{w: w, size: size}
	q.order = append(q.order, j)
	q.used += size
	return j
}

// slot waits until j may start decoding a result; false means the pass is
// stopping. Items behind the awaited one leave the last slot free, so the
// awaited item, when it holds no slot (none decoding, none queued), always
// finds one: the others hold at most slots-1. When it holds some, the
// consumer frees them by taking its results.
func (q *budgetQueue[W, R]) slot(j *budgetJob[W, R]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && !j.held {
		limit := q.slots
		if q.order[0] != j {
			limit--
		}
		if q.inUse < limit {
			j.held = true
			q.inUse++
			break
		}
		q.cond.Wait()
	}
	return !q.stopped
}

// decode runs decode on j's work item, queueing its results, each in a slot
// taken before decode makes it; a result the stopping pass refuses goes to
// release. It finishes j.
func (q *budgetQueue[W, R]) decode(ctx context.Context, j *budgetJob[W, R],
	decode func(ctx context.Context, w W, emit func(r R, size int64) bool) error, release func(R)) {
	err := ctx.Err()
	if err == nil && q.slot(j) {
		err = Safe(func() error {
			return decode(ctx, j.w, func(r R, size int64) bool {
				if q.put(j, r, size) {
					// The next result's slot, before decode makes it.
					return q.slot(j)
				}
				if release != nil {
					release(r)
				}
				return false
			})
		})
	}
	q.finish(j, err)
}

// put queues a result of j, waiting for room; false means the pass is stopping.
// The result takes over the slot j held for it.
func (q *budgetQueue[W, R]) put(j *budgetJob[W, R], r R, size int64) bool {
	size = max(size, minResultSize)
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && !q.fits(size) && !(q.order[0] == j && len(j.results) < 2) {
		q.cond.Wait()
	}
	if q.stopped {
		return false
	}
	if !j.held {
		q.inUse++ // emitted without a slot: count it all the same
	}
	j.held = false
	j.results = append(j.results, sized[R]{r, size})
	q.used += size
	q.cond.Broadcast()
	return true
}

// finish marks j decoded, with the error that ended it.
func (q *budgetQueue[W, R]) finish(j *budgetJob[W, R], err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j.done, j.err = true, err
	q.used -= j.size
	j.size = 0
	if j.held {
		j.held = false
		q.inUse--
	}
	q.cond.Broadcast()
}

// splitDone records that split returned, with its error.
func (q *budgetQueue[W, R]) splitDone(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.split, q.splitErr = true, err
	q.cond.Broadcast()
}

// stop makes every wait return: the consumer left or ctx was cancelled.
func (q *budgetQueue[W, R]) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.cond.Broadcast()
}

// ready reports whether next has something to return: the pass stopped or
// ended, or the awaited item has a result or is done.
func (q *budgetQueue[W, R]) ready() bool {
	if q.stopped {
		return true
	}
	if len(q.order) == 0 {
		return q.split
	}
	h := q.order[0]
	return len(h.results) > 0 || h.done
}

// next waits for the next result in stream order. ok is false at the end of
// the pass or when it was stopped; err is the first error in stream order.
func (q *budgetQueue[W, R]) next() (r R, err error, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for !q.ready() {
			q.cond.Wait()
		}
		switch {
		case q.stopped:
			return r, nil, false
		case len(q.order) == 0:
			return r, q.splitErr, q.splitErr != nil
		}
		h := q.order[0]
		if len(h.results) > 0 {
			s := h.results[0]
			h.results[0] = sized[R]{}
			h.results = h.results[1:]
			q.used -= s.size
			q.inUse--
			q.cond.Broadcast()
			return s.r, nil, true
		}
		q.order[0] = nil
		q.order = q.order[1:]
		q.cond.Broadcast()
		if h.err != nil {
			return r, h.err, true
		}
	}
}

// leftovers returns the results never taken, once every goroutine has exited.
func (q *budgetQueue[W, R]) leftovers() []R {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []R
	for _, j := range q.order {
		for _, s := range j.results {
			out = append(out, s.r)
		}
		j.results = nil
	}
	return out
}
