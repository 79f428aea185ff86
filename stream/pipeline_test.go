package stream

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"testing"
	"time"
)

func counting(n int) func(context.Context, func(int) bool) error {
	return func(ctx context.Context, emit func(int) bool) error {
		for i := 0; i < n && emit(i); i++ {
		}
		return nil
	}
}

// settle waits for goroutines started by a test to exit.
func settle(t *testing.T, before int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d goroutines left running (had %d)", runtime.NumGoroutine(), before)
}

func TestOrderedKeepsOrder(t *testing.T) {
	before := runtime.NumGoroutine()
	decode := func(ctx context.Context, i int) (int, error) {
		if i%7 == 0 {
			time.Sleep(time.Millisecond) // later items overtake this one
		}
		return i * i, nil
	}
	next := 0
	for r, err := range Ordered(context.Background(), 4, counting(500), decode, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if r != next*next {
			t.Fatalf("got %d at position %d", r, next)
		}
		next++
	}
	if next != 500 {
		t.Fatalf("%d results", next)
	}
	settle(t, before)
}

func TestOrderedFirstErrorInStreamOrder(t *testing.T) {
	boom := errors.New("boom")
	decode := func(ctx context.Context, i int) (int, error) {
		switch i {
		case 40:
			time.Sleep(5 * time.Millisecond)
			return 0, boom
		case 41:
			return 0, errors.New("later error")
		}
		return i, nil
	}
	n := 0
	var got error
	for _, err := range Ordered(context.Background(), 3, counting(100), decode, nil) {
		if err != nil {
			got = err
			break
		}
		n++
	}
	if !errors.Is(got, boom) || n != 40 {
		t.Fatalf("err %v after %d results; want boom after 40", got, n)
	}
}

func TestOrderedSplitError(t *testing.T) {
	bad := errors.New("bad header")
	split := func(ctx context.Context, emit func(int) bool) error {
		emit(0)
		emit(1)
		return bad
	}
	var results int
	var got error
	for _, err := range Ordered(context.Background(), 2, split, func(_ context.Context, i int) (int, error) { return i, nil }, nil) {
		if err != nil {
			got = err
			continue
		}
		results++
	}
	if results != 2 || !errors.Is(got, bad) {
		t.Fatalf("%d results, err %v", results, got)
	}
}

func TestOrderedBreakReleasesAndStops(t *testing.T) {
	before := runtime.NumGoroutine()
	released := make(chan int, 100)
	for r, err := range Ordered(context.Background(), 4, counting(1_000_000), func(_ context.Context, i int) (int, error) { return i, nil }, func(i int) { released <- i }) {
		if err != nil {
			t.Fatal(err)
		}
		if r == 10 {
			break
		}
	}
	settle(t, before)
	if len(released) > 2*4+4 {
		t.Fatalf("%d results decoded past the break; in-flight bound broken", len(released))
	}
}

func TestOrderedCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got error
	n := 0
	for _, err := range Ordered(ctx, 2, counting(1_000_000), func(_ context.Context, i int) (int, error) { return i, nil }, nil) {
		if err != nil {
			got = err
			break
		}
		if n++; n == 100 {
			cancel()
		}
	}
	if !errors.Is(got, context.Canceled) {
		t.Fatalf("cancelled pass ended with %v after %d results", got, n)
	}
	settle(t, before)
}

type item struct{ v int }

func (item) Release() {}

// Each gives batch i to worker i mod P, so per-worker sums are fixed.
func TestEachAssignment(t *testing.T) {
	seq := func(ctx context.Context) iter.Seq2[item, error] {
		return func(yield func(item, error) bool) {
			for i := range 100 {
				if !yield(item{i}, nil) {
					return
				}
			}
		}
	}
	sums := make([]int, 3)
	if err := Each(context.Background(), seq, 3, func(w int, b item) error {
		if b.v%3 != w {
			t.Errorf("batch %d went to worker %d", b.v, w)
		}
		sums[w] += b.v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if sums[0]+sums[1]+sums[2] != 4950 {
		t.Fatalf("sums %v", sums)
	}
	boom := errors.New("boom")
	err := Each(context.Background(), seq, 2, func(w int, b item) error {
		if b.v == 31 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Each returned %v, want boom", err)
	}
}
