package ndarray

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// Any bytes either open and read as rows of the declared width, or fail
// with a *stream.Error; none panics or reads more rows than declared.
func FuzzNPY(f *testing.F) {
	f.Add(NPY("<f8", []int{3, 2}, false, []float64{1, 2, 3, 4, 5, 6}))
	f.Add(NPY(">i4", []int{2, 2}, false, []float64{1, -2, 3, 4}))
	f.Add(NPY("|u1", []int{4}, false, []float64{0, 1, 2, 255}))
	f.Add(NPY("<f4", []int{2, 3}, true, []float64{1, 2, 3, 4, 5, 6}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "f.npy")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(p, stream.Options{BatchRows: 3})
		if err != nil {
			var se *stream.Error
			if !errors.As(err, &se) {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		info := src.Info()
		var rows int64
		for b, err := range src.Rows(context.Background()) {
			if err != nil {
				var se *stream.Error
				if !errors.As(err, &se) {
					t.Fatalf("error without a position: %v", err)
				}
				return
			}
			if b.Cols != info.Cols || len(b.Data) != b.Rows*b.Cols {
				t.Fatalf("batch of %d×%d with %d values, info %d columns", b.Rows, b.Cols, len(b.Data), info.Cols)
			}
			rows += int64(b.Rows)
			b.Release()
		}
		if rows != info.Rows {
			t.Fatalf("%d rows read, %d declared", rows, info.Rows)
		}
	})
}
