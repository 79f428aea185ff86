package columnar

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamfit/streamfit/stream"
)

var (
	int32Type = arrow.PrimitiveTypes.Int32
	int64Type = arrow.PrimitiveTypes.Int64
	pairType  = arrow.StructOf(
		arrow.Field{Name: stream.DefaultTermColumn, Type: int32Type},
		arrow.Field{Name: stream.DefaultCountColumn, Type: int32Type},
	)
)

// docSchemaFor returns the schema a writer uses for a layout.
func docSchemaFor(layout string, o stream.WriteOptions) (*arrow.Schema, error) {
	var fields []arrow.Field
	switch layout {
	case "", LayoutLists:
		fields = []arrow.Field{
			{Name: stream.DefaultTermsColumn, Type: arrow.ListOfNonNullable(int32Type)},
			{Name: stream.DefaultCountsColumn, Type: arrow.ListOfNonNullable(int32Type)},
		}
	case LayoutPairs:
		fields = []arrow.Field{{Name: stream.DefaultTermsColumn, Type: arrow.ListOfNonNullable(pairType)}}
	case LayoutLong:
		fields = []arrow.Field{
			{Name: stream.DefaultDocColumn, Type: int64Type},
			{Name: stream.DefaultTermColumn, Type: int32Type, Nullable: true},
			{Name: stream.DefaultCountColumn, Type: int32Type, Nullable: true},
		}
	default:
		return nil, fmt.Errorf("document layout %q is not one of lists, pairs, long", layout)
	}
	return schemaWithMeta(fields, o.Terms, o.Vocab, nil), nil
}

// docWriter buffers documents into row groups and writes them as records.
type docWriter struct {
	s      *sink
	schema *arrow.Schema
	layout string
	rows   int          // rows per row group, 0 for no limit
	bytes  int64        // decoded bytes per row group
	buf    *stream.Docs // documents not yet written; buf.Start is the first's index
	off32  []int32
	failed error
}

// createDocs opens a document writer for path in the container k.
func createDocs(path string, k kind, o stream.WriteOptions) (stream.DocWriter, error) {
	sc, err := docSchemaFor(o.Layout, o)
	if err != nil {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "%v", err)
	}
	s, err := newSink(path, k, sc, o)
	if err != nil {
		return nil, err
	}
	layout := o.Layout
	if layout == "" {
		layout = LayoutLists
	}
	rows, bytes := groupLimits(k, o)
	return &docWriter{s: s, schema: sc, layout: layout, rows: rows, bytes: bytes, buf: &stream.Docs{Offsets: []int{0}}}, nil
}

// Write appends a batch of documents; whole row groups go to the file as
// they fill.
func (w *docWriter) Write(b *stream.Docs) error {
	if w.failed != nil {
		return w.failed
	}
	for i := range b.Len() {
		w.buf.AppendDoc(b.Doc(i))
		if w.buf.Len() == w.rows || docsBytes(w.buf) >= w.bytes {
			if err := w.flush(); err != nil {
				w.failed = err
				return err
			}
		}
	}
	return nil
}

func int32Data(v []int32) arrow.ArrayData {
	return array.NewData(int32Type, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, 0, 0)
}

func listData(t arrow.DataType, off []int32, child arrow.ArrayData) arrow.ArrayData {
	return array.NewData(t, len(off)-1, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(off))}, []arrow.ArrayData{child}, 0, 0)
}

// flush writes the buffered documents as one row group (record batch).
func (w *docWriter) flush() error {
	n := w.buf.Len()
	if n == 0 {
		return nil
	}
	if w.buf.NNZ() > 1<<31-1 {
		return errors.New("row group holds more than 2^31 entries; lower RowGroupRows")
	}
	w.off32 = w.off32[:0]
	for _, o := range w.buf.Offsets {
		w.off32 = append(w.off32, int32(o))
	}
	var cols []arrow.Array
	rows := int64(n)
	switch w.layout {
	case LayoutLists:
		cols = []arrow.Array{
			array.MakeFromData(listData(w.schema.Field(0).Type, w.off32, int32Data(w.buf.Terms))),
			array.MakeFromData(listData(w.schema.Field(1).Type, w.off32, int32Data(w.buf.Counts))),
		}
	case LayoutPairs:
		nnz := w.buf.NNZ()
		st := array.NewData(pairType, nnz, []*memory.Buffer{nil}, []arrow.ArrayData{int32Data(w.buf.Terms), int32Data(w.buf.Counts)}, 0, 0)
		cols = []arrow.Array{array.MakeFromData(listData(w.schema.Field(0).Type, w.off32, st))}
	case LayoutLong:
		cols, rows = w.longColumns()
	}
	rec := array.NewRecordBatch(w.schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	err := w.s.write(rec)
	rec.Release()
	w.buf.Reset(w.buf.Start + int64(n))
	return err
}

// longColumns lays the buffered documents out as (doc, term, count) rows; an
// empty document becomes one row with a null term and count.
func (w *docWriter) longColumns() ([]arrow.Array, int64) {
	b := w.buf
	rows := b.NNZ()
	empty := 0
	for i := range b.Len() {
		if b.Offsets[i] == b.Offsets[i+1] {
			empty++
		}
	}
	rows += empty
	docs := make([]int64, 0, rows)
	terms, counts := b.Terms, b.Counts
	var valid []byte
	if empty > 0 {
		terms, counts = make([]int32, 0, rows), make([]int32, 0, rows)
		valid = make([]byte, bitutil.BytesForBits(int64(rows)))
	}
	for i := range b.Len() {
		id := b.Start + int64(i)
		lo, hi := b.Offsets[i], b.Offsets[i+1]
		if empty == 0 {
			for range hi - lo {
				docs = append(docs, id)
			}
			continue
		}
		if lo == hi {
			docs = append(docs, id)
			terms, counts = append(terms, 0), append(counts, 0)
			continue
		}
		for j := lo; j < hi; j++ {
			bitutil.SetBit(valid, len(docs))
			docs = append(docs, id)
		}
		terms, counts = append(terms, b.Terms[lo:hi]...), append(counts, b.Counts[lo:hi]...)
	}
	nulls := 0
	var vb *memory.Buffer
	if empty > 0 {
		nulls, vb = empty, memory.NewBufferBytes(valid)
	}
	mk := func(v []int32) arrow.Array {
		return array.MakeFromData(array.NewData(int32Type, rows, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, nulls, 0))
	}
	docArr := array.MakeFromData(array.NewData(int64Type, rows, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(docs))}, nil, 0, 0))
	return []arrow.Array{docArr, mk(terms), mk(counts)}, int64(rows)
}

// Close writes what is buffered and renames the file into place.
func (w *docWriter) Close() error {
	if w.failed != nil {
		w.s.abort()
		return w.failed
	}
	if err := w.flush(); err != nil {
		w.s.abort()
		return err
	}
	return w.s.close()
}

// Abort removes the temporary file.
func (w *docWriter) Abort() error { return w.s.abort() }
