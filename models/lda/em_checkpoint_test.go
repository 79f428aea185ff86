package lda

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An EM checkpoint carries a checksum: every single-bit flip of it, and a
// cut, is refused with a message naming the file, before any of it is
// used; an intact one reads back bit for bit.
func TestEMCheckpointChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "em.ckpt")
	alpha, beta := []float64{0.1, 0.2, 0.3}, []float64{1, 2, 3, 4, 5, 6}
	h := emHeader{Run: "run", K: 3, D: 2, Bounds: []float64{-7.5}}
	if err := writeCheckpoint(path, h, func(w io.Writer) error { return writeFloats(w, alpha, beta) }); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	read := func() error {
		var got emHeader
		a, b := make([]float64, 3), make([]float64, 6)
		_, err := readCheckpoint(path, &got, func(r io.Reader) error { return readFloats(r, a, b) })
		if err == nil && (got.Run != "run" || a[2] != 0.3 || b[5] != 6) {
			t.Fatalf("read back %+v %v %v", got, a, b)
		}
		return err
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	for i := range len(good) * 8 {
		bad := []byte(string(good))
		bad[i/8] ^= 1 << (i % 8)
		os.WriteFile(path, bad, 0o644)
		if err := read(); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
	}
	for _, cut := range []int{len(good) - 1, len(good) - 8, len(good) / 2, 3} {
		os.WriteFile(path, good[:cut], 0o644)
		if err := read(); err == nil || !strings.Contains(err.Error(), "not used") {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}
