package columnar

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// A null element in a list of term ids or counts is reported as such at
// its row, not as a row with more term ids than counts, from the levels
// and through pqarrow, in Parquet and in Arrow.
func TestNullListElement(t *testing.T) {
	for _, c := range []struct {
		name, terms, counts, col string
	}{
		{"count", `[[1,2],[3,4,5]]`, `[[1,1],[2,null,2]]`, "counts"},
		{"term", `[[1,2],[3,null,5]]`, `[[1,1],[2,2,2]]`, "terms"},
	} {
		for _, ext := range []string{".parquet", ".arrow"} {
			t.Run(c.name+ext, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "n"+ext)
				writeRecord(t, path, record(t, listsF, c.terms, c.counts))
				src, err := stream.Open(path, stream.Options{Terms: 10})
				if err != nil {
					t.Fatal(err)
				}
				_, err = stream.Collect(context.Background(), src)
				checkErr(t, err, stream.ErrValue, path, 1, c.col, "null")
				if ext == ".parquet" {
					src.(*docSource).t.plan = nil // pqarrow's reader
					_, err = stream.Collect(context.Background(), src)
					checkErr(t, err, stream.ErrValue, path, 1, c.col, "null")
				}
			})
		}
	}
}
