package columnar

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamfit/streamfit/stream"
)

// Spark ML vectors carry their vocabulary's size: a file of them names it
// without metadata (dense vectors by their length), and a vector of
// another size, or with an index past its size, is refused at its row.
func TestSparkVectorSize(t *testing.T) {
	fields := []arrow.Field{{Name: "features", Type: sparkVector}}
	cases := []struct {
		name, rows string
		terms      int // 0: refused
		row        int64
		msg        string
	}{
		{"sparse", `[{"type":0,"size":6,"indices":[1,5],"values":[1,2]},{"type":0,"size":6,"indices":[0],"values":[3]}]`, 6, 0, ""},
		{"dense", `[{"type":1,"size":null,"indices":null,"values":[0,1,0,2]},{"type":1,"values":[1,0,0,0]}]`, 4, 0, ""},
		{"index past size", `[{"type":0,"size":6,"indices":[1],"values":[1]},{"type":0,"size":6,"indices":[0,9],"values":[3,1]}]`, 0, 1, "sparse vector of size 6 with index 9"},
		{"first index past its size", `[{"type":0,"size":3,"indices":[1,5],"values":[1,1]}]`, 0, 0, "sparse vector of size 3 with index 5"},
		{"another size", `[{"type":0,"size":6,"indices":[1],"values":[1]},{"type":0,"size":7,"indices":[0],"values":[3]}]`, 0, 1, "vector of size 7, but the vocabulary has 6 words"},
		{"dense of another length", `[{"type":1,"values":[1,0,0]},{"type":1,"values":[1,0]}]`, 0, 1, "vector of size 2, but the vocabulary has 3 words"},
		{"fractional count", `[{"type":0,"size":6,"indices":[1],"values":[1]},{"type":0,"size":6,"indices":[2],"values":[0.5]}]`, 0, 1, "0.5"},
	}
	for _, c := range cases {
		for _, ext := range []string{".parquet", ".arrow"} {
			t.Run(c.name+ext, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "v"+ext)
				writeRecord(t, path, record(t, fields, c.rows))
				src, err := stream.Open(path, stream.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := src.Info().Terms; c.terms > 0 && got != c.terms {
					t.Fatalf("vocabulary of %d words, want %d", got, c.terms)
				}
				_, err = stream.Collect(context.Background(), src)
				if c.terms > 0 {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				checkErr(t, err, stream.ErrValue, path, c.row, "features", c.msg)
			})
		}
	}
}
