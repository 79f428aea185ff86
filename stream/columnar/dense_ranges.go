package columnar

import (
	"context"
	"iter"

	"github.com/streamfit/streamfit/stream"
)

// DensePieceSource is the sample rows of a range of row groups (record
// batches) of a dense table, opened by OpenDensePieces. A pass reads only
// those pieces; rows keep their index in the whole file (the batches'
// Start), and since a pass over the whole file never puts rows of two
// pieces in one batch, ranges that partition the file give the very
// batches a pass over the whole file does.
type DensePieceSource struct {
	src  *denseSource
	rows [2]int64
	info stream.Info
}

// OpenDensePieces opens the row groups [first, end) of the Parquet file, or
// the record batches [first, end) of the Arrow IPC file, at path as dense
// rows read with o (end < 0: to the last). It refuses with ErrRange what
// OpenPieces refuses (a range beyond the file's pieces or empty, inputs
// without an index of pieces).
func OpenDensePieces(path string, o stream.Options, first, end int) (*DensePieceSource, error) {
	k, err := indexedKind(path, o)
	if err != nil {
		return nil, err
	}
	src, err := openDense(path, k, o)
	if err != nil {
		return nil, err
	}
	s := src.(*denseSource)
	t := s.t
	unit := PieceUnit(k.String(), 2)
	pieces, end, err := t.selectPieces(path, unit, first, end)
	if err != nil {
		return nil, err
	}
	ps := &DensePieceSource{src: s, info: s.Info()}
	ps.rows = [2]int64{pieces[first].FirstRow, pieces[end-1].FirstRow + pieces[end-1].Rows}
	ps.info.Rows = ps.rows[1] - ps.rows[0]
	ps.info.Bytes = 0
	for _, p := range pieces[first:] {
		ps.info.Bytes += p.Bytes
	}
	return ps, nil
}

// Info describes the range: Rows counts its rows and Bytes its pieces'
// size in the file.
func (s *DensePieceSource) Info() stream.Info { return s.info }

// RowRange returns the rows [first, end) of the file the range holds.
func (s *DensePieceSource) RowRange() [2]int64 { return s.rows }

// Close closes the file.
func (s *DensePieceSource) Close() error { return stream.Close(s.src) }

// Rows runs one pass over the range's rows.
func (s *DensePieceSource) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		for b, err := range s.src.Rows(ctx) {
			if err != nil {
				yield(nil, shift(err, s.rows[0]))
				return
			}
			b.Start += s.rows[0]
			if !yield(b, nil) {
				return
			}
		}
	}
}
