package stream

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// splitSized emits items 0..n-1, each holding itemSize bytes.
func splitSized(n int, itemSize int64) func(context.Context, func(int, int64) bool) error {
	return func(ctx context.Context, emit func(int, int64) bool) error {
		for i := 0; i < n && emit(i, itemSize); i++ {
		}
		return nil
	}
}

// Each item decodes into several results; they come out in item order and
// emit order, with items finishing out of order.
func TestOrderedBudgetKeepsOrder(t *testing.T) {
	before := runtime.NumGoroutine()
	const items, per = 60, 7
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		for j := range per {
			if (i+j)%5 == 0 {
				time.Sleep(200 * time.Microsecond) // later items overtake this one
			}
			if !emit(i*per+j, 1000) {
				return nil
			}
		}
		return nil
	}
	next := 0
	for r, err := range OrderedBudget(context.Background(), 3, 64<<10, splitSized(items, 0), decode, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if r != next {
			t.Fatalf("got %d at position %d", r, next)
		}
		next++
	}
	if next != items*per {
		t.Fatalf("%d results, want %d", next, items*per)
	}
	settle(t, before)
}

// The bytes produced but not yet taken never exceed the budget by more than
// the two results the awaited item may always queue, however large the
// items are, and the consumer sees every byte.
func TestOrderedBudgetBoundsBytes(t *testing.T) {
	const budget, size = 100 << 10, 10 << 10
	var held, peak atomic.Int64
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		for range 50 { // each item is 5× the budget
			n := held.Add(size)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if !emit(size, size) {
				return nil
			}
		}
		return nil
	}
	var total int64
	for r, err := range OrderedBudget(context.Background(), 4, budget, splitSized(20, 0), decode, nil) {
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Microsecond) // a slow consumer lets producers fill the budget
		held.Add(-int64(r))
		total += int64(r)
	}
	if total != 20*50*size {
		t.Fatalf("consumer saw %d bytes, want %d", total, 20*50*size)
	}
	// held also counts one result per worker made but not yet queued, and
	// the one the consumer holds.
	if limit := int64(budget + (2+4+1)*size); peak.Load() > limit {
		t.Fatalf("peak %d bytes in flight, budget %d (limit %d)", peak.Load(), budget, limit)
	}
	if peak.Load() < budget/2 {
		t.Fatalf("peak %d bytes: producers never ran ahead (budget %d)", peak.Load(), budget)
	}
}

// Work items read ahead count against the budget too: with items as large
// as the budget, only one is held at a time beyond those being decoded.
func TestOrderedBudgetCountsItems(t *testing.T) {
	var inflight, peak atomic.Int64
	split := func(ctx context.Context, emit func(int, int64) bool) error {
		for i := range 30 {
			n := inflight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if !emit(i, 1<<20) {
				return nil
			}
		}
		return nil
	}
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		time.Sleep(100 * time.Microsecond)
		inflight.Add(-1)
		emit(i, 1)
		return nil
	}
	n := 0
	for _, err := range OrderedBudget(context.Background(), 2, 1<<20, split, decode, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 30 || peak.Load() > 2 {
		t.Fatalf("%d results, peak %d items held (want 30 and ≤ 2)", n, peak.Load())
	}
}

// A result larger than the whole budget still goes through.
func TestOrderedBudgetOversizedResult(t *testing.T) {
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		emit(i, 1<<30)
		emit(i, 1<<30)
		return nil
	}
	n := 0
	for _, err := range OrderedBudget(context.Background(), 2, 1<<10, splitSized(5, 0), decode, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 10 {
		t.Fatalf("%d results, want 10", n)
	}
}

// The first error in stream order comes after the results before it, even
// when a later item fails first, and split errors come after every item.
func TestOrderedBudgetErrors(t *testing.T) {
	boom := errors.New("boom")
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		switch i {
		case 4:
			time.Sleep(2 * time.Millisecond)
			emit(40, 1)
			return boom
		case 5:
			return errors.New("later error")
		}
		emit(i*10, 1)
		emit(i*10+1, 1)
		return nil
	}
	var got []int
	var gotErr error
	for r, err := range OrderedBudget(context.Background(), 3, 1<<20, splitSized(10, 0), decode, nil) {
		if err != nil {
			gotErr = err
			break
		}
		got = append(got, r)
	}
	if !errors.Is(gotErr, boom) || len(got) != 9 || got[8] != 40 {
		t.Fatalf("err %v after %v; want boom after 9 results ending in 40", gotErr, got)
	}

	splitErr := errors.New("bad split")
	split := func(ctx context.Context, emit func(int, int64) bool) error {
		emit(0, 0)
		emit(1, 0)
		return splitErr
	}
	n := 0
	for _, err := range OrderedBudget(context.Background(), 2, 1<<20, split, decode, nil) {
		if err != nil {
			gotErr = err
			break
		}
		n++
	}
	if !errors.Is(gotErr, splitErr) || n != 4 {
		t.Fatalf("split error %v after %d results; want it after 4", gotErr, n)
	}
}

// Breaking out releases every result not yielded and stops all goroutines;
// cancelling the context ends the pass with the context's error.
func TestOrderedBudgetStops(t *testing.T) {
	before := runtime.NumGoroutine()
	var made, released atomic.Int64
	decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
		for {
			made.Add(1)
			if !emit(i, 100) {
				return nil
			}
		}
	}
	release := func(int) { released.Add(1) }
	taken := 0
	for _, err := range OrderedBudget(context.Background(), 3, 10<<10, splitSized(1000, 0), decode, release) {
		if err != nil {
			t.Fatal(err)
		}
		if taken++; taken == 50 {
			break
		}
	}
	if made.Load() != int64(taken)+released.Load() {
		t.Fatalf("made %d results, took %d, released %d", made.Load(), taken, released.Load())
	}
	settle(t, before)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var last error
	start := time.Now()
	for _, err := range OrderedBudget(ctx, 2, 10<<10, splitSized(1<<30, 0), decode, nil) {
		once.Do(cancel)
		last = err
	}
	if !errors.Is(last, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("after cancel: last error %v, %v", last, time.Since(start))
	}
	settle(t, before)
}

// At most ResultSlots(workers) results exist at once, counted from when a
// worker starts making one until the consumer takes it, however long the
// items are (the byte budget here would allow 256); with a slow consumer the
// pass does reach that many, so a pass's set of batches is set early and not
// by its timing.
func TestOrderedBudgetBoundsResults(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		var live, peak atomic.Int64
		decode := func(ctx context.Context, i int, emit func(int, int64) bool) error {
			for range 1 + i%7 {
				n := live.Add(1) // a slot is held from here
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if !emit(i, 100) {
					return nil
				}
			}
			return nil
		}
		n := 0
		for _, err := range OrderedBudget(context.Background(), workers, 1<<20, splitSized(200, 0), decode, nil) {
			if err != nil {
				t.Fatal(err)
			}
			live.Add(-1)
			if n++; n%10 == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
		if want := 4 * 200; n < 200 || n > want {
			t.Fatalf("workers %d: %d results", workers, n)
		}
		// The consumer counts a result as taken only once next has handed it
		// over (and freed its slot), so its count may show one more.
		if got, want := peak.Load(), int64(ResultSlots(workers)); got < want || got > want+1 {
			t.Fatalf("workers %d: peak %d results made and not taken, want ResultSlots = %d (+1 being handed over)", workers, got, want)
		}
	}
}

// A free list from NewFreeList(n) hands out its n batches oldest-released
// first, so each is used in turn, and makes more only when all are out.
func TestFreeListTakesOldest(t *testing.T) {
	l := NewFreeList(3)
	a, b, c := l.Get(0), l.Get(1), l.Get(2)
	if a == b || b == c || a == c || a.Start != 0 || c.Start != 2 {
		t.Fatal("the first three batches are not distinct, fresh batches")
	}
	d := l.Get(3) // all three are out: a new one
	if d == a || d == b || d == c {
		t.Fatal("a batch was handed out twice")
	}
	a.Terms = append(a.Terms, 7)
	for _, x := range []*Docs{b, a, d, c} {
		x.Release()
	}
	for i, want := range []*Docs{b, a, d, c} {
		if got := l.Get(int64(i)); got != want || got.Len() != 0 || got.NNZ() != 0 {
			t.Fatalf("get %d: not the oldest released batch, or not reset", i)
		}
	}
	if cap(a.Terms) == 0 {
		t.Fatal("a reused batch lost its memory")
	}
}
