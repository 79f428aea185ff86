package columnar

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/streamfit/streamfit/stream"
)

// ErrRange reports a range of row groups (record batches) that cannot be
// read: beyond the file's, or of an input that has none to select.
var ErrRange = errors.New("row-group range refused")

// Piece is a row group of a Parquet file or a record batch of an Arrow IPC
// file: the unit of parallel decoding, and what a range (OpenPieces)
// selects.
type Piece struct {
	Index int `json:"index"`
	// FirstRow is the index in the file of the piece's first row, and Rows
	// its number of rows: documents, except in the long (doc, term, count)
	// layout, whose rows are entries.
	FirstRow int64 `json:"first_row"`
	Rows     int64 `json:"rows"`
	// Bytes is the piece's size in the file, as stored (compressed).
	Bytes int64 `json:"bytes"`
}

// PieceUnit names n pieces of a format: "row group(s)" (Parquet) or
// "record batch(es)" (Arrow IPC); "" for formats without pieces.
func PieceUnit(format string, n int) string {
	var one, many string
	switch format {
	case FormatParquet:
		one, many = "row group", "row groups"
	case FormatArrow, FormatArrowStream:
		one, many = "record batch", "record batches"
	}
	if n == 1 {
		return one
	}
	return many
}

func rangeErr(path, format string, args ...any) error {
	return stream.Errorf(path, 0, -1, "", ErrRange, format, args...)
}

// indexedKind returns the kind of the file at path if it lists its pieces
// (Parquet, Arrow IPC file), else an ErrRange saying what to do instead.
func indexedKind(path string, o stream.Options) (kind, error) {
	k, name, ok, err := detectKind(path, o.Format)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, rangeErr(path, "%s input has no row groups: ranges of row groups need a Parquet or Arrow IPC file; select documents by index instead", name)
	case k == kindStream:
		return 0, rangeErr(path, "an Arrow IPC stream has no index of its record batches, so a range would read and skip all those before it: "+
			"convert it to an Arrow IPC file or Parquet, or select documents by index instead")
	}
	return k, nil
}

// detectKind returns the format name of the file at path (forced names a
// format, as Options.Format) and, when ok, its container kind (Parquet,
// Arrow IPC file or stream).
func detectKind(path, forced string) (k kind, name string, ok bool, err error) {
	f, err := stream.Detect(path, forced)
	if err != nil {
		return 0, "", false, err
	}
	switch f.Name {
	case FormatParquet:
		return kindParquet, f.Name, true, nil
	case FormatArrow:
		return kindArrow, f.Name, true, nil
	case FormatArrowStream:
		return kindStream, f.Name, true, nil
	}
	return 0, f.Name, false, nil
}

// Pieces lists the row groups of the Parquet file or the record batches of
// the Arrow IPC file at path, from the Parquet footer or the record
// batches' headers: no data is decoded. Other inputs, Arrow IPC streams
// included, are refused with ErrRange.
func Pieces(path string, o stream.Options) ([]Piece, error) {
	k, err := indexedKind(path, o)
	if err != nil {
		return nil, err
	}
	t, err := openTable(path, k)
	if err != nil {
		return nil, err
	}
	return t.pieces(t.chunks)
}

// pieces lists the first n pieces of t.
func (t *table) pieces(n int) ([]Piece, error) {
	out := make([]Piece, n)
	var row int64
	add := func(i int, rows, bytes int64) {
		out[i] = Piece{Index: i, FirstRow: row, Rows: rows, Bytes: bytes}
		row += rows
	}
	if t.kind == kindParquet {
		for i := range out {
			add(i, t.meta.RowGroup(i).NumRows(), rowGroupBytes(t.meta, i))
		}
		return out, nil
	}
	blocks, err := t.blocks, t.blocksErr
	if err == nil && len(blocks) < n {
		err = fmt.Errorf("the footer lists %d record batches, not %d", len(blocks), n)
	}
	if err != nil {
		return nil, corrupt(t.path, err)
	}
	f, err := stream.OpenFile(t.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for i := range out {
		rows, err := ipcRows(f, blocks[i])
		if err != nil {
			return nil, corrupt(t.path, fmt.Errorf("record batch %d: %w", i, err))
		}
		add(i, rows, blocks[i].meta+blocks[i].body)
	}
	return out, nil
}

// PieceSource is the documents of a range of row groups (record batches)
// of a file, opened by OpenPieces. A pass reads only those pieces.
// Documents keep their index in the whole file (the batches' Start), so
// statistics of ranges say which documents they cover; and since a pass
// over the whole file never puts documents of two pieces in one batch,
// ranges that partition the file give the very batches a pass over the
// whole file does.
type PieceSource struct {
	src    *docSource
	pieces [2]int
	docs   [2]int64
	info   stream.Info
}

// OpenPieces opens the row groups [first, end) of the Parquet file, or the
// record batches [first, end) of the Arrow IPC file, at path as documents
// read with o (end < 0: to the last). The document index of the range's
// first document comes from the row counts in the Parquet footer or the
// record batch headers, so the pieces before the range are not decoded.
//
// Refused with ErrRange: a range beyond the file's pieces or empty; Arrow
// IPC streams, docword and text inputs (they have no index of pieces: read
// a range of documents instead); the long (doc, term, count) layout, whose
// documents may continue across pieces and whose document indexes are not
// in the metadata; raw text tables.
func OpenPieces(path string, o stream.Options, first, end int) (*PieceSource, error) {
	k, err := indexedKind(path, o)
	if err != nil {
		return nil, err
	}
	src, err := openDocs(path, k, o)
	if errors.Is(err, stream.ErrIsText) {
		return nil, rangeErr(path, "raw text table: ranges of row groups are read from tokenized document tables only; select documents by index instead")
	}
	if err != nil {
		return nil, err
	}
	s := src.(*docSource)
	t := s.t
	one, unit := PieceUnit(k.String(), 1), PieceUnit(k.String(), 2)
	if s.ds.layout == LayoutLong {
		return nil, rangeErr(path, "long (doc, term, count) table: a document may continue in the next %s, and the index of a %s's first document is not in the metadata; "+
			"convert the file to the lists layout or select documents by index instead", one, one)
	}
	pieces, end, err := t.selectPieces(path, unit, first, end)
	if err != nil {
		return nil, err
	}
	ps := &PieceSource{src: s, pieces: [2]int{first, end}, info: s.Info()}
	ps.docs = [2]int64{pieces[first].FirstRow, pieces[end-1].FirstRow + pieces[end-1].Rows}
	ps.info.Rows = ps.docs[1] - ps.docs[0]
	ps.info.Bytes = 0
	for _, p := range pieces[first:] {
		ps.info.Bytes += p.Bytes
	}
	return ps, nil
}

// Info describes the range: Rows counts its documents and Bytes its pieces'
// size in the file; NNZ is unknown before a pass, as for a whole file.
func (s *PieceSource) Info() stream.Info { return s.info }

// DocRange returns the documents [first, end) of the file the range holds.
func (s *PieceSource) DocRange() [2]int64 { return s.docs }

// PieceRange returns the pieces [first, end) the source reads.
func (s *PieceSource) PieceRange() [2]int { return s.pieces }

// Docs runs one pass over the range's documents.
func (s *PieceSource) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		for b, err := range s.src.Docs(ctx) {
			if err != nil {
				yield(nil, shift(err, s.docs[0]))
				return
			}
			b.Start += s.docs[0]
			if !yield(b, nil) {
				return
			}
		}
	}
}

// selectPieces checks the piece range first:end of t (end < 0: to the
// last piece), limits t's passes to it and returns the pieces up to it
// with the resolved end. unit names the pieces in messages.
func (t *table) selectPieces(path, unit string, first, end int) ([]Piece, int, error) {
	n := t.chunks
	shown := fmt.Sprintf("%d:%d", first, end)
	if end < 0 {
		end, shown = n, fmt.Sprintf("%d:", first)
	}
	switch {
	case first < 0 || first >= n || end > n:
		return nil, 0, rangeErr(path, "%s %s are beyond the file's %d %s (0:%d)", unit, shown, n, unit, n)
	case end <= first:
		return nil, 0, rangeErr(path, "%s %s: an empty range", unit, shown)
	}
	pieces, err := t.pieces(end)
	if err != nil {
		return nil, 0, err
	}
	t.lo, t.hi = first, end
	return pieces, end, nil
}
