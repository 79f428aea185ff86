package markov

import (
	"math"

	"github.com/streamfit/streamfit/stream"
)

func outOfOrder(path string, row, id, prev int64) error {
	return stream.Errorf(path, 0, row, "", stream.ErrOrder, "set id %d follows set id %d: the rows of a set must be contiguous, with ids increasing (sort the rows by set id)", id, prev)
}

// checkSetBatch validates a batch: width, finite values, one id per row, ids
// non-decreasing within the batch (across batches the merger checks), and the
// optional per-row check.
func checkSetBatch(path string, b *stream.Dense, d int, check func(*stream.Dense, int) error) error {
	if b.Cols != d {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d)
	}
	if b.Rows > 0 && len(b.Group) != b.Rows {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrSchema, "no set id column: every row needs the id of its set (Dense.Group)")
	}
	for i, v := range b.Data[:b.Rows*d] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d)
		}
	}
	for i := 1; i < b.Rows; i++ {
		if b.Group[i] < b.Group[i-1] {
			return outOfOrder(path, b.Start+int64(i), b.Group[i], b.Group[i-1])
		}
	}
	if check != nil {
		for i := range b.Rows {
			if err := check(b, i); err != nil {
				return err
			}
		}
	}
	return nil
}
