package stream

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Open on a format of dense samples only is a wrong schema, not an
// unknown format: the commands that try documents first then read
// samples (inspect, convert --dense).
func TestOpenDenseOnlyFormat(t *testing.T) {
	Register(Format{
		Name: "test-dense-only",
		Match: func(path string, _ []byte) int {
			if strings.HasSuffix(path, ".denseonly") {
				return 2
			}
			return 0
		},
		OpenDense: func(path string, o Options) (DenseSource, error) {
			return &MemoryDense{All: &Dense{Cols: 1}}, nil
		},
	})
	// The registry is shared with the examples, which list the built-in
	// formats.
	t.Cleanup(func() {
		formatsMu.Lock()
		delete(formats, "test-dense-only")
		formatsMu.Unlock()
	})
	p := filepath.Join(t.TempDir(), "x.denseonly")
	if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p, Options{})
	if !errors.Is(err, ErrSchema) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "dense samples") {
		t.Fatalf("Open: %v", err)
	}
	if _, err := OpenDense(p, Options{}); err != nil {
		t.Fatalf("OpenDense: %v", err)
	}
}
