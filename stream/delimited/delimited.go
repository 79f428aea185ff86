// Package delimited reads dense samples from CSV and TSV files with a
// header line — what pandas' DataFrame.to_csv and np.savetxt(path, X,
// delimiter=",", header=..., comments="") write: one sample per line, one
// named column per feature. It registers the "csv" and "tsv" formats
// with the stream registry, through which stream.OpenDense reads them;
// the files may be gzip or zstd compressed (told apart by their magic
// bytes).
//
// The columns read are those Options.Columns names, or else every column
// whose first value is a number, except Options.GroupColumn (an integer
// id per row) and unnamed index columns (pandas writes its index under an
// empty name or "Unnamed: 0"). A pass parses the file a batch of rows at a
// time, so memory does not grow with the number of rows. A value that is
// not a finite number is an error naming the line, the row (0-based,
// header not counted) and the column.
package delimited

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfit/streamfit/stream"
)

// The registry names of the formats.
const (
	FormatCSV = "csv"
	FormatTSV = "tsv"
)

// LayoutColumns is the layout (stream.Info.Layout) of the samples: named
// numeric columns.
const LayoutColumns = "columns"

func init() {
	for _, f := range []struct {
		name string
		sep  rune
	}{{FormatCSV, ','}, {FormatTSV, '\t'}} {
		stream.Register(stream.Format{
			Name:      f.name,
			Match:     func(path string, head []byte) int { return match(path, head, f.name) },
			OpenDense: func(path string, o stream.Options) (stream.DenseSource, error) { return Open(path, f.sep, o) },
		})
	}
}

// match scores path for the format name: 1 for a name ending in .csv
// (name "csv") or .tsv or .tab (name "tsv"), before any .gz or .zst.
// Delimited text has no magic to recognise it by.
func match(path string, head []byte, name string) int {
	base, _ := stream.TrimCompression(strings.ToLower(filepath.Base(path)))
	switch ext := filepath.Ext(base); {
	case name == FormatCSV && ext == ".csv", name == FormatTSV && (ext == ".tsv" || ext == ".tab"):
		return 1
	}
	return 0
}

// Source is a CSV or TSV file opened for reading; every pass reopens it.
type Source struct {
	path   string
	sep    rune
	o      stream.Options
	header []string
	cols   []int // the columns read, in order
	group  int   // the id column, or -1
	info   stream.Info
	stamp  stream.Stamp
}

// Open reads the header line and the first row of the file at path, with
// columns separated by sep (',' or '\t'), and picks the columns to read.
func Open(path string, sep rune, o stream.Options) (*Source, error) {
	o = o.WithDefaults()
	f, err := open(path, sep)
	if err != nil {
		return nil, err
	}
	defer f.close()
	header, err := f.r.Read()
	if err == io.EOF {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrEmpty, "no header line")
	}
	if err != nil {
		return nil, f.err(err)
	}
	header = append([]string(nil), header...)
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	index := map[string]int{}
	for i, h := range header {
		if _, dup := index[h]; dup && h != "" {
			return nil, stream.Errorf(path, 1, -1, h, stream.ErrSchema, "column %q appears twice in the header", h)
		}
		index[h] = i
	}
	first, err := f.r.Read()
	if err != nil && err != io.EOF {
		return nil, f.err(err)
	}
	s := &Source{path: path, sep: sep, o: o, header: header, group: -1}
	if o.GroupColumn != "" {
		g, ok := index[o.GroupColumn]
		if !ok {
			return nil, stream.Errorf(path, 1, -1, o.GroupColumn, stream.ErrSchema, "no id column %q; the header has %s", o.GroupColumn, strings.Join(header, ", "))
		}
		s.group = g
	}
	if len(o.Columns) > 0 {
		for _, c := range o.Columns {
			i, ok := index[c]
			if !ok {
				return nil, stream.Errorf(path, 1, -1, c, stream.ErrSchema, "no column %q; the header has %s", c, strings.Join(header, ", "))
			}
			s.cols = append(s.cols, i)
		}
	} else {
		var left []string
		for i, h := range header {
			switch {
			case i == s.group:
				continue
			case h == "" || strings.HasPrefix(h, "Unnamed: "):
				left = append(left, fmt.Sprintf("%q (an unnamed index)", h))
				continue
			case first != nil:
				// A number out of float64's range is a number (its
				// row's error says so), not a label.
				if _, err := strconv.ParseFloat(strings.TrimSpace(first[i]), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
					left = append(left, fmt.Sprintf("%q (%q is not a number)", h, first[i]))
					continue
				}
			}
			s.cols = append(s.cols, i)
		}
		if len(s.cols) == 0 {
			return nil, stream.Errorf(path, 2, -1, "", stream.ErrSchema, "no numeric column (the first row's values name none); the header has %s", strings.Join(header, ", "))
		}
		if len(left) > 0 {
			o.Warnf("%s: reading %d numeric columns, leaving out %s; choose the columns by name to read others", path, len(s.cols), strings.Join(left, ", "))
		}
	}
	if s.stamp, err = stream.StampFile(path, nil); err != nil {
		return nil, err
	}
	names := make([]string, len(s.cols))
	for i, c := range s.cols {
		names[i] = header[c]
	}
	name := FormatCSV
	if sep == '\t' {
		name = FormatTSV
	}
	s.info = stream.Info{Path: path, Format: name, Layout: LayoutColumns, Rows: -1, NNZ: -1, Cols: len(s.cols),
		Schema: strings.Join(names, ", "), Checksum: stream.TextChecksum(f.head)}
	if st, err := stream.StatFile(path); err == nil {
		s.info.Bytes = st.Size()
	}
	return s, nil
}

// Info describes the file: Cols features; Rows is unknown (-1) before a
// pass.
func (s *Source) Info() stream.Info { return s.info }

// Rows is one pass over the samples.
func (s *Source) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return stream.PassRows(func(yield func(*stream.Dense) bool) error { return s.pass(ctx, yield) })
}

func (s *Source) pass(ctx context.Context, yield func(*stream.Dense) bool) error {
	if err := s.stamp.Check(); err != nil {
		return err
	}
	f, err := open(s.path, s.sep)
	if err != nil {
		return err
	}
	defer f.close()
	if _, err := f.r.Read(); err != nil {
		return f.err(err)
	}
	per := max(1, min(s.o.BatchRows, s.o.BatchBytes/(8*len(s.cols))))
	row := int64(0)
	b := stream.NewDense(0, len(s.cols))
	defer func() { b.Release() }()
	flush := func() bool {
		s.o.Progress.Add(int64(b.Rows), 0)
		ok := yield(b)
		b = stream.NewDense(row, len(s.cols))
		return ok
	}
	for {
		if row%int64(per) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := f.r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return f.err(err)
		}
		for _, c := range s.cols {
			v, err := s.value(rec[c])
			if err != nil {
				line, _ := f.r.FieldPos(c)
				return stream.Errorf(s.path, int64(line), row, s.header[c], stream.ErrValue, "%v", err)
			}
			b.Data = append(b.Data, v)
		}
		if s.group >= 0 {
			id, err := strconv.ParseInt(strings.TrimSpace(rec[s.group]), 10, 64)
			if err != nil {
				line, _ := f.r.FieldPos(s.group)
				return stream.Errorf(s.path, int64(line), row, s.header[s.group], stream.ErrValue, "id %q is not an integer", rec[s.group])
			}
			b.Group = append(b.Group, id)
		}
		b.Rows++
		row++
		if b.Rows == per && !flush() {
			return nil
		}
	}
	if b.Rows > 0 && !flush() {
		return nil
	}
	return s.stamp.Check()
}

// value parses one field as a finite number.
func (s *Source) value(field string) (float64, error) {
	t := strings.TrimSpace(field)
	if t == "" {
		return 0, errors.New("empty value: every value must be a number (drop or fill missing values first)")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("value %q is not a number", field)
	}
	if v-v != 0 || err != nil {
		return 0, fmt.Errorf("value %q: every value must be a finite number", field)
	}
	return v, nil
}

// file is an open, possibly compressed, delimited file.
type file struct {
	path  string
	f     stream.File
	r     *csv.Reader
	head  []byte
	close func()
}

func open(path string, sep rune) (*file, error) {
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil, err
	}
	raw := bufio.NewReaderSize(f, 256<<10)
	head, _ := raw.Peek(4)
	fl := &file{path: path, f: f, head: append([]byte(nil), head...), close: func() { f.Close() }}
	var in io.Reader = raw
	switch stream.Compression(head) {
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			f.Close()
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "gzip: %v", err)
		}
		in, fl.close = zr, func() { zr.Close(); f.Close() }
	case "zstd":
		zr, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "zstd: %v", err)
		}
		in, fl.close = zr, func() { zr.Close(); f.Close() }
	}
	fl.r = csv.NewReader(bufio.NewReaderSize(in, 256<<10))
	fl.r.Comma = sep
	fl.r.ReuseRecord = true
	if sep == '\t' {
		fl.r.LazyQuotes = true
	}
	return fl, nil
}

// err turns an error of the csv reader into one naming the file and line.
func (f *file) err(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return stream.Errorf(f.path, int64(pe.Line), -1, "", stream.ErrSchema, "a line with another number of fields than the header has")
		}
		return stream.Errorf(f.path, int64(pe.Line), -1, "", stream.ErrCorrupt, "%v", pe.Err)
	}
	return stream.Errorf(f.path, 0, -1, "", stream.ErrCorrupt, "%v", err)
}
