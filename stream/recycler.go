package stream

import (
	"slices"
	"sync"
)

// Recycler keeps the values one pass releases (buffers, batches, parsed
// parts) for the pass's lifetime and hands them out again, oldest released
// first. Unlike a sync.Pool, which the collector empties every cycle, it
// makes a pass reuse a fixed set of values, so its live heap (and with it
// the collector's heap goal and the peak RSS) does not drift up with the
// length of the input. Oldest first, every value it holds is used in turn:
// prefilled with as many values as a pass can have out at once, all of them
// reach their working size within the first few uses, instead of a new one
// being grown whenever the pass happens to get busier than before. The zero
// value is empty and ready. Safe for concurrent use.
type Recycler[T any] struct {
	mu   sync.Mutex
	free []*T // oldest first
}

// Prefill adds n new zero values.
func (r *Recycler[T]) Prefill(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.free = slices.Grow(r.free, n)
	for range n {
		r.free = append(r.free, new(T))
	}
}

// Get returns the oldest released value, or a new zero one when none is
// left.
func (r *Recycler[T]) Get() *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.free)
	if n == 0 {
		return new(T)
	}
	x := r.free[0]
	copy(r.free, r.free[1:])
	r.free[n-1] = nil
	r.free = r.free[:n-1]
	return x
}

// Put takes back x (nil is ignored).
func (r *Recycler[T]) Put(x *T) {
	if x == nil {
		return
	}
	r.mu.Lock()
	r.free = append(r.free, x)
	r.mu.Unlock()
}
