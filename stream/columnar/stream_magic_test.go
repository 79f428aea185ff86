package columnar

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// An Arrow IPC stream whose first bytes are damaged says so at open,
// instead of "unexpected EOF"; inspect's checksum line says Arrow IPC has
// none.
func TestStreamBadStart(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "c.arrows")
	writeDocs(t, good, corpus(50, 30, 5, 9), stream.WriteOptions{})
	src, err := stream.Open(good, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := src.Info().Checksum; !strings.Contains(c, "Arrow IPC has no checksum") {
		t.Errorf("checksum %q", c)
	}
	b, _ := os.ReadFile(good)
	for _, at := range []int{0, 3} {
		c := []byte(string(b))
		c[at] ^= 0x80
		bad := filepath.Join(dir, "bad.arrows")
		os.WriteFile(bad, c, 0o644)
		_, err := stream.Open(bad, stream.Options{})
		if !errors.Is(err, stream.ErrFormat) || !strings.Contains(err.Error(), "not an Arrow IPC stream") || !strings.Contains(err.Error(), bad) {
			t.Errorf("byte %d flipped: %v", at, err)
		}
	}
}
