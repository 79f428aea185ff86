package columnar

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamfit/streamfit/stream"
)

// DefaultGroupColumn is the id column written by the dense writer.
const DefaultGroupColumn = "group"

// denseWriter writes rows as a fixed_size_list<float64> column "x" plus an
// int64 "group" column when the batches carry ids. The schema is fixed by the
// first batch, since the row width is not known before.
type denseWriter struct {
	path   string
	kind   kind
	o      stream.WriteOptions
	s      *sink
	schema *arrow.Schema
	cols   int
	group  bool
	buf    stream.Dense
	rg     int // rows per row group
	failed error
}

func createDense(path string, k kind, o stream.WriteOptions) (stream.DenseWriter, error) {
	return &denseWriter{path: path, kind: k, o: o, cols: -1}, nil
}

func (w *denseWriter) start(cols int, group bool) error {
	fields := []arrow.Field{{Name: stream.DefaultValuesColumn, Type: arrow.FixedSizeListOfNonNullable(int32(cols), arrow.PrimitiveTypes.Float64)}}
	extra := map[string]string{}
	if group {
		fields = append(fields, arrow.Field{Name: DefaultGroupColumn, Type: int64Type})
		extra[MetaGroup] = DefaultGroupColumn
	}
	w.schema = schemaWithMeta(fields, 0, nil, extra)
	s, err := newSink(w.path, w.kind, w.schema, w.o)
	if err != nil {
		return err
	}
	w.s, w.cols, w.group = s, cols, group
	w.buf.Cols = cols
	// Rows per row group: the given number, or as many as fit the byte limit.
	rows, bytes := groupLimits(w.kind, w.o)
	if w.rg = rows; rows == 0 {
		w.rg = int(max(1, bytes/int64(8*max(cols, 1)+8)))
	}
	return nil
}

// Write appends a batch of rows. Every batch must have the width of the first
// and carry ids if and only if the first did.
func (w *denseWriter) Write(b *stream.Dense) error {
	if w.failed != nil {
		return w.failed
	}
	if w.s == nil {
		if err := w.start(b.Cols, b.Group != nil); err != nil {
			w.failed = err
			return err
		}
	}
	if b.Cols != w.cols || (b.Group != nil) != w.group {
		w.failed = fmt.Errorf("%s: batch of %d columns (ids %v) after batches of %d (ids %v)", w.path, b.Cols, b.Group != nil, w.cols, w.group)
		return w.failed
	}
	for i := 0; i < b.Rows; {
		n := min(b.Rows-i, w.rg-w.buf.Rows)
		w.buf.Data = append(w.buf.Data, b.Data[i*b.Cols:(i+n)*b.Cols]...)
		if w.group {
			w.buf.Group = append(w.buf.Group, b.Group[i:i+n]...)
		}
		w.buf.Rows += n
		i += n
		if w.buf.Rows >= w.rg {
			if err := w.flush(); err != nil {
				w.failed = err
				return err
			}
		}
	}
	return nil
}

func (w *denseWriter) flush() error {
	n := w.buf.Rows
	if n == 0 {
		return nil
	}
	child := array.NewData(arrow.PrimitiveTypes.Float64, len(w.buf.Data), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(w.buf.Data))}, nil, 0, 0)
	x := array.MakeFromData(array.NewData(w.schema.Field(0).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0))
	cols := []arrow.Array{x}
	if w.group {
		cols = append(cols, array.MakeFromData(array.NewData(int64Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(w.buf.Group))}, nil, 0, 0)))
	}
	rec := array.NewRecordBatch(w.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	err := w.s.write(rec)
	rec.Release()
	w.buf.Rows, w.buf.Data, w.buf.Group = 0, w.buf.Data[:0], w.buf.Group[:0]
	return err
}

// Close writes what is buffered and renames the file into place. A writer
// that saw no rows writes an empty table of width 0.
func (w *denseWriter) Close() error {
	if w.failed != nil {
		w.Abort()
		return w.failed
	}
	if w.s == nil {
		if err := w.start(0, false); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		w.s.abort()
		return err
	}
	return w.s.close()
}

// Abort removes the temporary file, if one was started.
func (w *denseWriter) Abort() error {
	if w.s == nil {
		return nil
	}
	return w.s.abort()
}
