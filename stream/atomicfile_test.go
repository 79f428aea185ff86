package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateAtomicSpecialFiles: an output path that is a character device is
// written into (it stays a device: the rename of Commit never replaces it),
// and a directory is refused.
func TestCreateAtomicSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := CreateAtomic(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("CreateAtomic(%s): %v", dir, err)
	}
	if st, err := os.Stat(os.DevNull); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		f, err := CreateAtomic(os.DevNull)
		if err != nil {
			t.Fatalf("CreateAtomic(%s): %v", os.DevNull, err)
		}
		if _, err := f.Write([]byte("data")); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
			t.Fatalf("%s after a write: %v, %v", os.DevNull, st, err)
		}
	}
	f, err := CreateAtomic(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
}
