package main

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

// The formats infer writes its shares in, and the extensions of --out that
// choose them.
var (
	shareFormats    = []string{"parquet", "csv", "tsv", "jsonl"}
	shareExtensions = map[string]string{".parquet": "parquet", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
)

// shareFormat returns the format of the output out: format when given
// (--out-format), else CSV for standard output ("-") and the format of out's
// extension for a file. An extension that names no format is a usage
// error, so that a table is never written in a format its name denies.
func shareFormat(out, format string) (string, error) {
	if format != "" {
		if !slices.Contains(shareFormats, format) {
			return "", usagef("--out-format %q: want one of %s", format, strings.Join(shareFormats, ", "))
		}
		return format, nil
	}
	if out == "-" {
		return "csv", nil
	}
	if f, ok := shareExtensions[strings.ToLower(filepath.Ext(out))]; ok {
		return f, nil
	}
	return "", usagef("--out %s: the extension chooses the format: .parquet, .csv, .tsv, .jsonl or .ndjson (or --out-format %s)", out, strings.Join(shareFormats, "|"))
}

// shareTable is the layout of the table of shares infer writes.
type shareTable struct {
	k, d  int
	model string    // the model's kind
	item  string    // what has shares: "doc" (documents) or "row" (sample rows)
	unit  string    // what they are shares of: "topic" or "component"
	ids   *idSource // the id column; nil: none
	// top > 0 writes each item's top largest shares only, one row per
	// (item, unit) in decreasing order of share; 0 writes every share.
	top int
}

// shareWriter writes a table of shares: add appends n items from first
// with k shares each (and their ids); commit completes the output, abort
// removes it (a file) or leaves it incomplete (standard output).
type shareWriter interface {
	add(first int64, n int, shares []float64, ids columnar.IDs) error
	commit() error
	abort()
}

// shareSink is where a shareWriter's bytes go: a file written atomically,
// or standard output.
type shareSink struct {
	name string
	w    io.Writer
	f    *stream.AtomicFile // nil for standard output
}

func openSink(out string, stdout io.Writer) (*shareSink, error) {
	if out == "-" {
		return &shareSink{name: "standard output", w: stdout}, nil
	}
	f, err := stream.CreateAtomic(out)
	if err != nil {
		return nil, err
	}
	return &shareSink{name: out, w: f, f: f}, nil
}

func (s *shareSink) commit() error {
	if s.f == nil {
		return nil
	}
	return s.f.Commit()
}

func (s *shareSink) abort() {
	if s.f != nil {
		s.f.Abort()
	}
}

// newShareWriter returns the writer of t in format to out ("-": stdout).
func newShareWriter(out, format string, t shareTable, stdout io.Writer) (shareWriter, error) {
	sink, err := openSink(out, stdout)
	if err != nil {
		return nil, err
	}
	var w shareWriter
	if format == "parquet" {
		w, err = newParquetShares(sink, t)
	} else {
		w, err = newTextShares(sink, format, t)
	}
	if err != nil {
		sink.abort()
		return nil, err
	}
	return w, nil
}

// topOf returns the indices of the n largest of shares into idx, in
// decreasing order of share, the lower index first among equal shares.
func topOf(shares []float64, n int, idx []int) []int {
	idx = idx[:0]
	for i := range shares {
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(shares[b], shares[a]) })
	return idx[:min(n, len(idx))]
}

// textShares writes a table of shares as CSV, TSV or JSON Lines. Numbers
// are written in the shortest form that reads back to the same float64.
type textShares struct {
	t    shareTable
	sink *shareSink
	buf  *bufio.Writer
	csv  *csv.Writer // nil for JSON Lines
	rec  []string
	line []byte
	idx  []int
}

func newTextShares(sink *shareSink, format string, t shareTable) (*textShares, error) {
	w := &textShares{t: t, sink: sink, buf: bufio.NewWriterSize(sink.w, 1<<16)}
	if format == "jsonl" {
		return w, nil
	}
	w.csv = csv.NewWriter(w.buf)
	if format == "tsv" {
		w.csv.Comma = '\t'
	}
	head := []string{t.item}
	if t.ids != nil {
		head = append(head, "id")
	}
	if t.top > 0 {
		head = append(head, t.unit, "share")
	} else {
		for i := range t.k {
			head = append(head, t.unit+"_"+strconv.Itoa(i))
		}
	}
	if err := w.csv.Write(head); err != nil {
		return nil, fmt.Errorf("%s: %w", sink.name, err)
	}
	return w, nil
}

func (w *textShares) add(first int64, n int, shares []float64, ids columnar.IDs) error {
	k := w.t.k
	for i := range n {
		s := shares[i*k : (i+1)*k]
		id := func() string {
			if ids.Strings != nil {
				return ids.Strings[i]
			}
			return strconv.FormatInt(ids.Ints[i], 10)
		}
		if w.t.top == 0 {
			w.row(first+int64(i), id, -1, s)
		} else {
			w.idx = topOf(s, w.t.top, w.idx)
			for _, j := range w.idx {
				w.row(first+int64(i), id, j, s[j:j+1])
			}
		}
	}
	if w.csv != nil {
		w.csv.Flush()
		if err := w.csv.Error(); err != nil {
			return fmt.Errorf("%s: %w", w.sink.name, err)
		}
	}
	return nil
}

// row writes one row: item's shares, or with unit ≥ 0 its share of unit.
func (w *textShares) row(item int64, id func() string, unit int, shares []float64) {
	if w.csv != nil {
		w.rec = append(w.rec[:0], strconv.FormatInt(item, 10))
		if w.t.ids != nil {
			w.rec = append(w.rec, id())
		}
		if unit >= 0 {
			w.rec = append(w.rec, strconv.Itoa(unit))
		}
		for _, v := range shares {
			w.rec = append(w.rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		w.csv.Write(w.rec) // its error stays in the writer, read once per batch
		return
	}
	b := append(w.line[:0], `{"`...)
	b = append(b, w.t.item...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, item, 10)
	if w.t.ids != nil {
		b = append(b, `,"id":`...)
		if w.t.ids.String {
			q, _ := json.Marshal(id())
			b = append(b, q...)
		} else {
			b = append(b, id()...)
		}
	}
	if unit >= 0 {
		b = append(b, `,"`...)
		b = append(b, w.t.unit...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(unit), 10)
		b = append(b, `,"share":`...)
		b = strconv.AppendFloat(b, shares[0], 'g', -1, 64)
	} else {
		b = append(b, `,"theta":[`...)
		for j, v := range shares {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	w.buf.Write(b) // bufio keeps its first error, read at commit
	w.line = b
}

func (w *textShares) commit() error {
	if w.csv != nil {
		w.csv.Flush()
	}
	if err := w.buf.Flush(); err != nil {
		w.sink.abort()
		return fmt.Errorf("%s: %w", w.sink.name, err)
	}
	return w.sink.commit()
}

func (w *textShares) abort() { w.sink.abort() }

// shareRows is the number of Parquet rows per row group.
const shareRows = 1 << 16

// parquetShares writes a table of shares as Parquet (zstd), one row group
// per shareRows rows: the shares of an item as a list<double> theta, or
// with top the columns (unit int32, share double).
type parquetShares struct {
	t     shareTable
	sink  *shareSink
	w     *pqarrow.FileWriter
	b     *array.RecordBuilder
	item  *array.Int64Builder
	ids   array.Builder // the id column, when asked for
	list  *array.ListBuilder
	vals  *array.Float64Builder // the theta list's values, or the share column
	units *array.Int32Builder   // with top
	rows  int
	idx   []int
}

func newParquetShares(sink *shareSink, t shareTable) (*parquetShares, error) {
	md := arrow.NewMetadata([]string{"streamfit.d", "streamfit.k", "streamfit.model"}, []string{strconv.Itoa(t.d), strconv.Itoa(t.k), t.model})
	fields := []arrow.Field{{Name: t.item, Type: arrow.PrimitiveTypes.Int64}}
	if t.ids != nil {
		var typ arrow.DataType = arrow.PrimitiveTypes.Int64
		if t.ids.String {
			typ = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: "id", Type: typ})
	}
	if t.top > 0 {
		fields = append(fields, arrow.Field{Name: t.unit, Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "share", Type: arrow.PrimitiveTypes.Float64})
	} else {
		fields = append(fields, arrow.Field{Name: "theta", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)})
	}
	schema := arrow.NewSchema(fields, &md)
	// pqarrow closes a writer that is an io.Closer; the atomic file must
	// stay open until Commit, so it is handed over as a plain io.Writer.
	w, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{sink.w},
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sink.name, err)
	}
	p := &parquetShares{t: t, sink: sink, w: w, b: array.NewRecordBuilder(memory.NewGoAllocator(), schema)}
	p.item = p.b.Field(0).(*array.Int64Builder)
	if t.ids != nil {
		p.ids = p.b.Field(1)
	}
	last := len(fields) - 1
	if t.top > 0 {
		p.units = p.b.Field(last - 1).(*array.Int32Builder)
		p.vals = p.b.Field(last).(*array.Float64Builder)
	} else {
		p.list = p.b.Field(last).(*array.ListBuilder)
		p.vals = p.list.ValueBuilder().(*array.Float64Builder)
	}
	return p, nil
}

func (p *parquetShares) add(first int64, n int, shares []float64, ids columnar.IDs) error {
	k := p.t.k
	for i := range n {
		s := shares[i*k : (i+1)*k]
		units := 1
		if p.t.top > 0 {
			p.idx = topOf(s, p.t.top, p.idx)
			units = len(p.idx)
		}
		for r := range units {
			p.item.Append(first + int64(i))
			switch b := p.ids.(type) {
			case *array.Int64Builder:
				b.Append(ids.Ints[i])
			case *array.StringBuilder:
				b.Append(ids.Strings[i])
			}
			if p.t.top > 0 {
				p.units.Append(int32(p.idx[r]))
				p.vals.Append(s[p.idx[r]])
			} else {
				p.list.Append(true)
				p.vals.AppendValues(s, nil)
			}
			if p.rows++; p.rows == shareRows {
				if err := p.flush(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// flush writes the buffered rows as one row group.
func (p *parquetShares) flush() error {
	if p.rows == 0 {
		return nil
	}
	rec := p.b.NewRecordBatch()
	defer rec.Release()
	p.rows = 0
	if err := p.w.Write(rec); err != nil {
		return fmt.Errorf("%s: %w", p.sink.name, err)
	}
	return nil
}

func (p *parquetShares) commit() error {
	err := p.flush()
	if cerr := p.w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", p.sink.name, cerr)
	}
	p.b.Release()
	if err != nil {
		p.sink.abort()
		return err
	}
	return p.sink.commit()
}

func (p *parquetShares) abort() {
	p.w.Close()
	p.b.Release()
	p.sink.abort()
}
