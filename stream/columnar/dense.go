package columnar

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamfit/streamfit/stream"
)

// Dense layouts (stream.Info.Layout).
const (
	LayoutFixedList = "fixed-list"
	LayoutList      = "list"
	LayoutColumns   = "columns"
)

// denseSchema is the dense layout found in a schema.
type denseSchema struct {
	layout string
	values string   // the list column of the fixed-list and list layouts
	cols   []string // the numeric columns of the columns layout
	group  string   // id column, or ""
	ncols  int      // row width; 0 until read for the list layout
}

func (ds denseSchema) read() []string {
	cols := slices.Clone(ds.cols)
	if ds.values != "" {
		cols = append(cols, ds.values)
	}
	if ds.group != "" {
		cols = append(cols, ds.group)
	}
	return cols
}

// detectDense picks the values column, the numeric columns or fails.
func detectDense(path string, sc *arrow.Schema, o stream.Options) (denseSchema, error) {
	ds := denseSchema{group: o.GroupColumn}
	if ds.group == "" {
		if g, ok := metaValue(sc, MetaGroup); ok {
			ds.group = g
		}
	}
	if ds.group != "" {
		f, ok := field(sc, ds.group)
		if !ok {
			return ds, schemaErr(path, ds.group, sc, "missing id column %q", ds.group)
		}
		if !isInt(f.Type) {
			return ds, schemaErr(path, ds.group, sc, "id column %q has type %s, want int", ds.group, f.Type)
		}
	}
	listCol := func(name string) (denseSchema, error) {
		f, _ := field(sc, name)
		switch t := f.Type.(type) {
		case *arrow.FixedSizeListType:
			if isFloat(t.Elem()) {
				ds.layout, ds.values, ds.ncols = LayoutFixedList, name, int(t.Len())
				return ds, nil
			}
		case *arrow.ListType, *arrow.LargeListType:
			if isFloat(listElem(t)) {
				ds.layout, ds.values = LayoutList, name
				return ds, nil
			}
		}
		return ds, schemaErr(path, name, sc, "column %q has type %s, want fixed_size_list<float> or list<float>", name, f.Type)
	}
	switch {
	case o.ValuesColumn != "":
		if _, ok := field(sc, o.ValuesColumn); !ok {
			return ds, schemaErr(path, o.ValuesColumn, sc, "missing values column %q", o.ValuesColumn)
		}
		return listCol(o.ValuesColumn)
	case len(o.Columns) > 0:
		for _, c := range o.Columns {
			f, ok := field(sc, c)
			if !ok {
				return ds, schemaErr(path, c, sc, "missing column %q", c)
			}
			if !isNumeric(f.Type) {
				return ds, schemaErr(path, c, sc, "column %q has type %s, want a number", c, f.Type)
			}
		}
		ds.layout, ds.cols, ds.ncols = LayoutColumns, slices.Clone(o.Columns), len(o.Columns)
		return ds, nil
	}
	if _, ok := field(sc, stream.DefaultValuesColumn); ok {
		return listCol(stream.DefaultValuesColumn)
	}
	for _, f := range sc.Fields() {
		if e := listElem(f.Type); (e != nil && isFloat(e)) || (f.Type.ID() == arrow.FIXED_SIZE_LIST && isFloat(f.Type.(*arrow.FixedSizeListType).Elem())) {
			return listCol(f.Name)
		}
	}
	for _, f := range sc.Fields() {
		if isNumeric(f.Type) && f.Name != ds.group {
			ds.cols = append(ds.cols, f.Name)
		}
	}
	if len(ds.cols) == 0 {
		return ds, schemaErr(path, "", sc, "no dense values: want a fixed_size_list<float> or list<float> column (default %q) or numeric columns", stream.DefaultValuesColumn)
	}
	ds.layout, ds.ncols = LayoutColumns, len(ds.cols)
	return ds, nil
}

// denseSource is a stream.DenseSource over a Parquet or Arrow table.
type denseSource struct {
	t    *table
	ds   denseSchema
	o    stream.Options
	info stream.Info
	// rows is the most rows per batch: Options.BatchRows, fewer when that
	// many rows would take more than Options.BatchBytes.
	rows int
}

// batchRows is the number of rows of width values that fit the batch limits.
func batchRows(o stream.Options, width int) int {
	return max(1, min(o.BatchRows, o.BatchBytes/(8*max(width, 1))))
}

// listWidth estimates the values per row of a list<float> column from the
// Parquet column statistics or the first record batch, for sizing batches
// before a pass; 0 when unknown.
func listWidth(t *table, col string) int {
	switch t.kind {
	case kindParquet:
		w := 0
		for i := range t.meta.Schema.NumColumns() {
			if t.meta.Schema.Column(i).ColumnPath()[0] != col {
				continue
			}
			for rg := range t.meta.NumRowGroups() {
				md := t.meta.RowGroup(rg)
				cc, err := md.ColumnChunk(i)
				if err == nil && md.NumRows() > 0 {
					w = max(w, int((cc.NumValues()+md.NumRows()-1)/md.NumRows()))
				}
			}
		}
		return w
	case kindArrow:
		f, err := stream.OpenFile(t.path)
		if err != nil {
			return 0
		}
		defer f.Close()
		w := 0
		guard(func() error {
			r, err := openIPCFile(f, t.size)
			if err != nil || r.NumRecords() == 0 {
				return err
			}
			defer r.Close()
			if err := checkBlock(f, t.blocks, t.blocksErr, 0); err != nil {
				return err
			}
			rec, err := r.RecordBatchAt(0)
			if err != nil {
				return err
			}
			defer rec.Release()
			if a := column(rec, col); a != nil && rec.NumRows() > 0 {
				if _, _, v := offsets(a); v != nil {
					w = int((int64(v.Len()) + rec.NumRows() - 1) / rec.NumRows())
				}
			}
			return nil
		})
		return w
	}
	return 0
}

func openDense(path string, k kind, o stream.Options) (stream.DenseSource, error) {
	o = o.WithDefaults()
	t, err := openTable(path, k)
	if err != nil {
		return nil, err
	}
	ds, err := detectDense(path, t.schema, o)
	if err != nil {
		return nil, err
	}
	width := ds.ncols
	if ds.layout == LayoutList {
		width = listWidth(t, ds.values)
	}
	return &denseSource{t: t, ds: ds, o: o, rows: batchRows(o, width), info: stream.Info{
		Path: path, Format: k.String(), Layout: ds.layout, Rows: t.rows, NNZ: -1,
		Bytes: t.size, Cols: ds.ncols, Schema: schemaString(t.schema), Checksum: t.checksum(),
	}}, nil
}

// Info describes the table; Cols is 0 for the list layout until a pass.
func (s *denseSource) Info() stream.Info { return s.info }

type densePart struct {
	batches []*stream.Dense
	rows    int64
}

// size is the memory the part's batches hold.
func (p densePart) size() int64 {
	var n int64
	for _, b := range p.batches {
		n += int64(8*len(b.Data) + 8*len(b.Group))
	}
	return n
}

func (p densePart) release() {
	for _, b := range p.batches {
		b.Release()
	}
}

// Rows runs one pass over the rows.
func (s *denseSource) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		decode := func(l loaded) (densePart, error) { return s.decode(l) }
		var base int64
		cols := s.ds.ncols
		for p, err := range pass(ctx, s.t, s.o, s.ds.read(), fixedRows(s.rows), nil, decode, densePart.size, densePart.release) {
			if err != nil {
				yield(nil, shift(err, base))
				return
			}
			for i, b := range p.batches {
				if cols == 0 {
					cols = b.Cols
				}
				if b.Cols != cols {
					yield(nil, stream.Errorf(s.t.path, 0, base+b.Start, s.ds.values, stream.ErrValue, "row has %d values, earlier rows %d", b.Cols, cols))
					densePart{batches: p.batches[i:]}.release()
					return
				}
				b.Start += base
				s.o.Progress.Add(int64(b.Rows), 0)
				if !yield(b, nil) {
					densePart{batches: p.batches[i+1:]}.release()
					return
				}
			}
			base += p.rows
		}
	}
}

func (s *denseSource) errorf(row int64, col string, format string, args ...any) error {
	return stream.Errorf(s.t.path, 0, row, col, stream.ErrValue, format, args...)
}

// floatValues returns a float array's values as float64 (copying float32).
func floatValues(a arrow.Array, scratch []float64) ([]float64, []float64) {
	switch v := a.(type) {
	case *array.Float64:
		return v.Float64Values(), scratch
	case *array.Float32:
		out := grow(scratch, v.Len())
		for i, x := range v.Float32Values() {
			out[i] = float64(x)
		}
		return out, out
	}
	out := grow(scratch, a.Len())
	for i := range out {
		out[i] = numberAt(a, i)
	}
	return out, out
}

// numberAt reads value i of any numeric array (the columns layout's rare path).
func numberAt(a arrow.Array, i int) float64 {
	switch v := a.(type) {
	case *array.Float64:
		return v.Value(i)
	case *array.Float32:
		return float64(v.Value(i))
	case *array.Int64:
		return float64(v.Value(i))
	case *array.Int32:
		return float64(v.Value(i))
	case *array.Uint64:
		return float64(v.Value(i))
	case *array.Uint32:
		return float64(v.Value(i))
	}
	return float64(intAt(a, i))
}

// finite reports the index of the first NaN or infinity in x, or -1.
func finite(x []float64) int {
	for j, v := range x {
		if v-v != 0 {
			return j
		}
	}
	return -1
}

// decode turns a piece into dense batches with rows counted within the piece.
func (s *denseSource) decode(l loaded) (densePart, error) {
	var p densePart
	var cur *stream.Dense
	var scratch []float64
	var colVals [][]float64
	for _, rec := range l.recs {
		n := int(rec.NumRows())
		var groups []int64
		if s.ds.group != "" {
			ga := column(rec, s.ds.group)
			if i := firstNull(ga); i >= 0 {
				return p, s.errorf(p.rows+int64(i), s.ds.group, "null id")
			}
			groups, _ = int64s(ga, nil)
		}
		// get yields row i's values (valid until the next call).
		var get func(i int) ([]float64, error)
		width := s.ds.ncols
		switch s.ds.layout {
		case LayoutColumns:
			colVals = colVals[:0]
			for _, c := range s.ds.cols {
				a := column(rec, c)
				if i := firstNull(a); i >= 0 {
					return p, s.errorf(p.rows+int64(i), c, "missing value")
				}
				v, _ := floatValues(a, nil)
				colVals = append(colVals, v)
			}
			row := make([]float64, width)
			get = func(i int) ([]float64, error) {
				for j, v := range colVals {
					row[j] = v[i]
				}
				return row, nil
			}
		default:
			a := column(rec, s.ds.values)
			var vals []float64
			var o32 []int32
			var o64 []int64
			var child arrow.Array
			if fl, ok := a.(*array.FixedSizeList); ok {
				child = fl.ListValues()
			} else {
				o32, o64, child = offsets(a)
			}
			if i := firstNull(a); i >= 0 {
				return p, s.errorf(p.rows+int64(i), s.ds.values, "missing row")
			}
			if i := firstNull(child); i >= 0 {
				return p, s.errorf(p.rows+rowAt(o32, o64, i), s.ds.values, "missing value")
			}
			vals, scratch = floatValues(child, scratch)
			off := a.Data().Offset()
			get = func(i int) ([]float64, error) {
				var lo, hi int64
				switch {
				case o32 != nil:
					lo, hi = int64(o32[i]), int64(o32[i+1])
				case o64 != nil:
					lo, hi = o64[i], o64[i+1]
				default:
					lo = int64(off+i) * int64(width)
					hi = lo + int64(width)
				}
				if lo < 0 || lo > hi || hi > int64(len(vals)) {
					return nil, stream.Errorf(s.t.path, 0, p.rows+int64(i), s.ds.values, stream.ErrCorrupt, "list offsets out of bounds")
				}
				return vals[lo:hi], nil
			}
		}
		for i := range n {
			x, err := get(i)
			if err != nil {
				return p, err
			}
			row := p.rows + int64(i)
			if cur == nil || cur.Rows >= s.rows {
				cur = stream.NewDense(row, len(x))
				if s.ds.group != "" {
					cur.Group = make([]int64, 0, min(s.rows, n-i))
				}
				p.batches = append(p.batches, cur)
			}
			if len(x) != cur.Cols {
				return p, s.errorf(row, s.ds.values, "row has %d values, earlier rows %d", len(x), cur.Cols)
			}
			if j := finite(x); j >= 0 {
				col := s.ds.values
				if s.ds.layout == LayoutColumns {
					col = s.ds.cols[j]
				} else {
					col = fmt.Sprintf("%s[%d]", col, j)
				}
				return p, s.errorf(row, col, "value %v is not finite", x[j])
			}
			cur.Data = append(cur.Data, x...)
			cur.Rows++
			if groups != nil {
				cur.Group = append(cur.Group, groups[i])
			}
		}
		p.rows += int64(n)
	}
	return p, nil
}
