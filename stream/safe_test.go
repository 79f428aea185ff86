package stream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/mmap"
)

type node struct{ next *node }

//go:noinline
func depth(n *node) int { return 1 + depth(n.next) }

// A panic in a decoder, on a pass's own goroutines, ends the pass with a
// *PanicError naming the function that panicked, instead of the process.
func TestPanicsBecomeErrors(t *testing.T) {
	before := runtime.NumGoroutine()
	decode := func(ctx context.Context, i int) (int, error) {
		if i == 30 {
			return depth(&node{}), nil // nil dereference two calls down
		}
		return i, nil
	}
	var err error
	n := 0
	for _, e := range Ordered(context.Background(), 3, counting(100), decode, nil) {
		if e != nil {
			err = e
			break
		}
		n++
	}
	var pe *PanicError
	if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Fault || !strings.Contains(pe.Where, "depth") || n != 30 {
		t.Fatalf("after %d results: %v (%#v)", n, err, pe)
	}
	settle(t, before)

	split := func(ctx context.Context, emit func(int, int64) bool) error {
		for i := range 10 {
			if i == 5 {
				var s []int
				_ = s[i]
			}
			emit(i, 0)
		}
		return nil
	}
	budgetDecode := func(ctx context.Context, w int, emit func(int, int64) bool) error {
		emit(w, 0)
		return nil
	}
	err, n = nil, 0
	for _, e := range OrderedBudget(context.Background(), 2, 0, split, budgetDecode, nil) {
		if e != nil {
			err = e
			break
		}
		n++
	}
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "index out of range") || n != 5 {
		t.Fatalf("split panic after %d results: %v", n, err)
	}
	settle(t, before)

	if err := Locate("f.bin", err); !strings.HasPrefix(err.Error(), "f.bin: ") || !errors.As(err, &pe) {
		t.Fatalf("located: %v", err)
	}
}

// A memory-mapped file truncated under its mapping faults (SIGBUS) when a
// vanished page is read: inside Safe that is an ErrChanged error, not the
// end of the process.
func TestMappedFileShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	size := 4 * mmap.PageSize
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := mmap.Map(f, size)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer mmap.Unmap(data)
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = Safe(func() error {
		for _, b := range data {
			sum += b
		}
		return nil
	})
	var pe *PanicError
	if !errors.Is(err, ErrChanged) || !errors.As(err, &pe) || !pe.Fault || !strings.Contains(err.Error(), "changed while being read") {
		t.Fatalf("reading a truncated mapping: %v", err)
	}
}
