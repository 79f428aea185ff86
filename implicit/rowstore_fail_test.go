package implicit

import (
	"os"
	"testing"
)

// TestRowStoreWriteErrorCleansUp makes the chunk file unwritable: the
// failing Append must return the error, remove the store's directory and
// keep failing.
func TestRowStoreWriteErrorCleansUp(t *testing.T) {
	s, err := NewRowStore(t.TempDir(), 2, RowStoreOptions{ChunkRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	rf := s.files[0]
	rf.f.Close()
	ro, err := os.Open(rf.path) // read-only: writes fail
	if err != nil {
		t.Fatal(err)
	}
	rf.f = ro
	if err := s.Append([]float64{1, 2}, []float64{0.5}); err == nil {
		t.Fatal("Append to a read-only file succeeded")
	}
	if _, err := os.Stat(rf.dir); !os.IsNotExist(err) {
		t.Errorf("after a write error the directory %s still exists (stat: %v)", rf.dir, err)
	}
	if err := s.Append([]float64{1, 2}, []float64{0.5}); err == nil {
		t.Error("Append after a failure succeeded")
	}
}
