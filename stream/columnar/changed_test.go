package columnar

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// A Parquet or Arrow file changed between two passes is an error of the
// second pass naming it: rewritten in place with the same size (its time
// tells), or with its time put back as it was (its footer tells).
func TestChangedBetweenPasses(t *testing.T) {
	dir := t.TempDir()
	docs := corpus(400, 80, 6, 31)
	for _, name := range []string{"c.parquet", "c.arrow", "c.arrows"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			writeDocs(t, path, docs, stream.WriteOptions{RowGroupRows: 100})
			src, err := stream.Open(path, stream.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.Collect(context.Background(), src); err != nil {
				t.Fatal(err)
			}
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(path)
			for _, c := range []struct {
				what string
				at   int  // byte changed, from the end
				keep bool // the time put back
			}{
				{"modified", len(orig) / 2, false},
				{"footer changed", 40, true},
			} {
				if c.keep && name == "c.arrows" {
					continue // a stream has no footer: only its size and time are known
				}
				b := bytes.Clone(orig)
				b[len(b)-c.at] ^= 0x20
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				mt := st.ModTime().Add(time.Second)
				if c.keep {
					mt = st.ModTime()
				}
				os.Chtimes(path, mt, mt)
				_, err := stream.Collect(context.Background(), src)
				if !errors.Is(err, stream.ErrChanged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.what) {
					t.Errorf("%s: %v", c.what, err)
				}
			}
		})
	}
}
