package mmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A mapping holds the file's bytes, and still does after its pages are
// dropped: they fault back in from the page cache.
func TestMapDrop(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*PageSize/16+5)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := Map(f, len(want))
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(data)
	if !bytes.Equal(data, want) {
		t.Fatal("mapped bytes differ from the file")
	}
	Drop(data[:2*PageSize])
	if !bytes.Equal(data, want) {
		t.Fatal("bytes changed after their pages were dropped")
	}
}
