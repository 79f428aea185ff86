package docword

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/internal/mmap"
	"github.com/streamfit/streamfit/stream"
)

// A file rewritten between two passes (same size, in place) or truncated
// is an error of the next pass naming it, not a second pass over other
// data.
func TestChangedBetweenPasses(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"docword.a.txt", "docword.a.txt.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			writeCorpus(t, path, randomCorpus(rand.New(rand.NewPCG(3, 3)), 300, 100, 8), stream.WriteOptions{Terms: 100})
			src, err := Open(path, stream.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.Collect(context.Background(), src); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, change := range []struct {
				what string
				do   func()
			}{
				{"modified", func() {
					// The same bytes, written again: only the time tells.
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					later := time.Now().Add(time.Second)
					os.Chtimes(path, later, later)
				}},
				{"size went from", func() { os.Truncate(path, int64(len(b)-7)) }},
			} {
				change.do()
				_, err := stream.Collect(context.Background(), src)
				if !errors.Is(err, stream.ErrChanged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), change.what) {
					t.Errorf("after the file was %s: %v", change.what, err)
				}
			}
		})
	}
}

// A memory-mapped file truncated while a pass reads it (the kernel then
// raises SIGBUS on the vanished pages) ends the pass with an error naming
// the file, instead of killing the process.
func TestTruncatedWhileMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docword.big.txt")
	writeCorpus(t, path, randomCorpus(rand.New(rand.NewPCG(4, 4)), 4000, 500, 30), stream.WriteOptions{Terms: 500})
	src, err := Open(path, stream.Options{Workers: 2, BatchRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := src.mapPlain(); err != nil || m == nil {
		t.Skip("no mmap on this platform")
	} else {
		m.unmap()
	}
	src.chunk = 4096
	st, _ := os.Stat(path)
	if st.Size() < 50*int64(mmap.PageSize) {
		t.Fatalf("a file of %d bytes is too small to fault in the middle of a pass", st.Size())
	}
	var err2 error
	n := 0
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			err2 = err
			break
		}
		if n++; n == 1 {
			if err := os.Truncate(path, st.Size()/4); err != nil {
				t.Fatal(err)
			}
		}
		b.Release()
	}
	if !errors.Is(err2, stream.ErrChanged) || !strings.Contains(err2.Error(), path) || !strings.Contains(err2.Error(), "changed while being read") {
		t.Fatalf("after %d batches: %v", n, err2)
	}
	var pe *stream.PanicError
	if !errors.As(err2, &pe) || !pe.Fault {
		t.Errorf("the pass did not meet the vanished pages (a fault): %v", err2)
	}
	if bytes.Contains([]byte(err2.Error()), []byte("line")) {
		t.Errorf("a line is named for a fault: %v", err2)
	}
}
