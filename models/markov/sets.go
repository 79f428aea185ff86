package markov

import (
	"context"
	"iter"
	"math"

	"github.com/streamfit/streamfit/stream"
)

// setBatches re-cuts a pass of src into batches that hold whole sets only, so
// the per-set statistics (which are not additive within a set) can be formed
// by independent workers. It checks widths, values, ids and set sizes.
func setBatches(src stream.DenseSource, d int) func(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	path := src.Info().Path
	return func(ctx context.Context) iter.Seq2[*stream.Dense, error] {
		return func(yield func(*stream.Dense, error) bool) {
			var cur *stream.Dense // rows waiting for their set to end
			var curID int64
			var curLen int
			var setStart int64 // row index where the open set began
			flushTo := func(cut int) *stream.Dense {
				// Hand out rows [0, cut) of cur; keep the rest.
				out := stream.NewDense(cur.Start, d)
				out.Data = append(out.Data, cur.Data[:cut*d]...)
				out.Group = append(out.Group[:0], cur.Group[:cut]...)
				out.Rows = cut
				rest := stream.NewDense(cur.Start+int64(cut), d)
				rest.Data = append(rest.Data, cur.Data[cut*d:]...)
				rest.Group = append(rest.Group[:0], cur.Group[cut:]...)
				rest.Rows = cur.Rows - cut
				cur.Release()
				cur = rest
				return out
			}
			for b, err := range src.Rows(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				if b.Cols != d {
					yield(nil, stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d))
					return
				}
				if b.Rows > 0 && b.Group == nil {
					yield(nil, stream.Errorf(path, 0, b.Start, "", stream.ErrSchema, "no set id column: every row needs the id of its set (Dense.Group)"))
					return
				}
				for i, v := range b.Data[:b.Rows*d] {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						yield(nil, stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d))
						return
					}
				}
				if cur == nil {
					cur = stream.NewDense(b.Start, d)
					cur.Group = cur.Group[:0]
				}
				lastEnd := -1 // index in cur of the first row of the open set
				for i := range b.Rows {
					id := b.Group[i]
					row := b.Start + int64(i)
					if curLen > 0 && id != curID {
						if curLen < 3 {
							yield(nil, stream.Errorf(path, 0, setStart, "", stream.ErrValue, "set %d has %d rows; within-set triples need at least 3", curID, curLen))
							return
						}
						lastEnd = cur.Rows
						curLen = 0
					}
					if curLen == 0 {
						curID, setStart = id, row
					}
					curLen++
					cur.Data = append(cur.Data, b.Row(i)...)
					cur.Group = append(cur.Group, id)
					cur.Rows++
				}
				b.Release()
				if lastEnd > 0 {
					if !yield(flushTo(lastEnd), nil) {
						return
					}
				}
			}
			if cur != nil && cur.Rows > 0 {
				if curLen < 3 {
					yield(nil, stream.Errorf(path, 0, setStart, "", stream.ErrValue, "set %d has %d rows; within-set triples need at least 3", curID, curLen))
					return
				}
				yield(cur, nil)
			}
		}
	}
}

// eachSet calls fn(lo, hi) for every set [lo, hi) of rows in a set-aligned batch.
func eachSet(b *stream.Dense, fn func(lo, hi int)) {
	lo := 0
	for i := 1; i <= b.Rows; i++ {
		if i == b.Rows || b.Group[i] != b.Group[lo] {
			fn(lo, i)
			lo = i
		}
	}
}
