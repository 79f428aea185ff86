package gmm

import (
	"math"

	"github.com/streamfit/streamfit/stream"
)

// checkBatch rejects a batch whose width is not d or that holds NaN or ±Inf,
// naming the row in the source.
func checkBatch(path string, b *stream.Dense, d int) error {
	if b.Cols != d {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d)
	}
	for i, v := range b.Data[:b.Rows*b.Cols] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d)
		}
	}
	return nil
}
