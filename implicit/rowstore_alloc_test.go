package implicit_test

import (
	"runtime"
	"testing"

	"github.com/streamfit/streamfit/implicit"
)

// TestRowStoreAppendSteady checks that storing rows allocates nothing per
// chunk once warm: a pass writes one chunk per ChunkRows documents, so any
// per-chunk buffer is garbage that grows with the corpus (a fresh zstd
// output buffer per chunk, ≈0.4 MB at k=10, once set the peak RSS of the
// implicit plan's second pass).
func TestRowStoreAppendSteady(t *testing.T) {
	const k, rows = 10, 512
	s, err := implicit.NewRowStore(t.TempDir(), k, implicit.RowStoreOptions{ChunkRows: rows})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	y, inv := make([]float64, rows*k), make([]float64, rows)
	for i := range y {
		y[i] = float64(i%97) / 97
	}
	for i := range inv {
		inv[i] = 1 / float64(i+3)
	}
	for range 3 { // warm: buffers reach their size
		if err := s.Append(y, inv); err != nil {
			t.Fatal(err)
		}
	}
	const chunks = 40
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range chunks {
		if err := s.Append(y, inv); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perChunk := float64(after.TotalAlloc-before.TotalAlloc) / chunks
	raw := float64(rows * (4*k + 8))
	t.Logf("%.0f bytes allocated per chunk of %.0f raw bytes", perChunk, raw)
	if perChunk > raw/8 {
		t.Errorf("storing a chunk allocates %.0f bytes (a chunk is %.0f raw bytes): per-chunk garbage grows with the rows", perChunk, raw)
	}
	if s.Chunks() != 3+chunks {
		t.Errorf("%d chunks, want %d", s.Chunks(), 3+chunks)
	}
}
