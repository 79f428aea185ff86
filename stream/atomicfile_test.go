package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateAtomicRefusesSpecialFiles: an output path that is a device or a
// directory is refused instead of being replaced by the rename.
func TestCreateAtomicRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{os.DevNull, dir} {
		if _, err := CreateAtomic(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("CreateAtomic(%s): %v", path, err)
		}
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s: %v, %v", os.DevNull, st, err)
	}
	f, err := CreateAtomic(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
}
