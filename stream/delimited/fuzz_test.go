package delimited

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// Any text either opens and reads as rows of the chosen width, or fails
// with a *stream.Error; none panics.
func FuzzCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n3,4\n"))
	f.Add([]byte(",x,label\n0,1.5,cat\n1,2,dog\n"))
	f.Add([]byte("a,b\n1,\"2\n3\",4\n"))
	f.Add([]byte("a\tb\n1\t2\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(p, ',', stream.Options{BatchRows: 2})
		if err != nil {
			var se *stream.Error
			if !errors.As(err, &se) {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		cols := src.Info().Cols
		for b, err := range src.Rows(context.Background()) {
			if err != nil {
				var se *stream.Error
				if !errors.As(err, &se) {
					t.Fatalf("error without a position: %v", err)
				}
				return
			}
			if b.Cols != cols || len(b.Data) != b.Rows*b.Cols {
				t.Fatalf("batch of %d×%d with %d values, %d columns", b.Rows, b.Cols, len(b.Data), cols)
			}
			for _, v := range b.Data {
				if v-v != 0 {
					t.Fatalf("value %v passed", v)
				}
			}
			b.Release()
		}
	})
}
