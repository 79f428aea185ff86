package columnar

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// table is an opened columnar file: its schema and what its footer says. It
// holds no open file between passes; each pass reopens the path.
type table struct {
	path   string
	kind   kind
	size   int64
	schema *arrow.Schema
	meta   *metadata.FileMetaData // Parquet only
	chunks int                    // row groups or record batches; -1 for IPC streams
	rows   int64                  // -1 when unknown
	// lo and hi are the pieces a pass reads, [lo, hi): all of them unless
	// a range restricts the table (ranges.go).
	lo, hi int

	// plan, when set, makes Parquet passes read the lists or pairs layout
	// from the levels (parquet_lists.go) instead of through pqarrow.
	plan *[2]leafPlan

	// blocks are an Arrow IPC file's record batch blocks, read from its
	// footer once (ipcBlocks), for ranges and for each pass's page
	// dropping; blocksErr says why they could not be read.
	blocks    []ipcBlock
	blocksErr error

	// stamp is the file as it was opened, footer included: every pass
	// checks it is still so, since passes trust the footer read here.
	stamp stream.Stamp
}

// openTable reads the schema (and the Parquet footer) of path.
func openTable(path string, k kind) (*table, error) {
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	t := &table{path: path, kind: k, size: st.Size(), chunks: -1, rows: -1}
	if t.size == 0 {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrEmpty, "file is empty")
	}
	if t.stamp, err = stream.StampFile(path, footerLen(k)); err != nil {
		return nil, err
	}
	if err := checkMagic(f, t); err != nil {
		return nil, err
	}
	err = guard(func() error {
		switch k {
		case kindParquet:
			pr, err := openParquet(f)
			if err != nil {
				return err
			}
			fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			if t.schema, err = fr.Schema(); err != nil {
				return err
			}
			t.meta = pr.MetaData()
			t.chunks = pr.NumRowGroups()
			t.rows = pr.NumRows()
		case kindArrow:
			r, err := openIPCFile(f, t.size)
			if err != nil {
				return err
			}
			t.schema = r.Schema()
			t.chunks = r.NumRecords()
			r.Close()
			t.blocks, t.blocksErr = ipcBlocks(f, t.size)
		case kindStream:
			r, err := newStreamReader(f, t.size)
			if err != nil {
				return err
			}
			t.schema = r.Schema()
			r.Release()
		}
		return nil
	})
	if err != nil {
		where := map[kind]string{kindParquet: "the footer", kindArrow: "the footer", kindStream: "the schema"}[k]
		return nil, corrupt(path, fmt.Errorf("%s: %w", where, err))
	}
	t.hi = t.chunks
	return t, nil
}

// checkMagic tells a file of another format (a forced --format, or a
// misleading name) and a truncated one from a damaged one, before the
// decoders give a less helpful message.
func checkMagic(f stream.File, t *table) error {
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	tail := make([]byte, 6)
	if t.size >= int64(len(tail)) {
		m, _ := f.ReadAt(tail, t.size-int64(len(tail)))
		tail = tail[:m]
	}
	var want []byte
	name := map[kind]string{kindParquet: "a Parquet file", kindArrow: "an Arrow IPC file", kindStream: "an Arrow IPC stream"}[t.kind]
	switch t.kind {
	case kindParquet:
		want = magicParquet
	case kindArrow:
		want = magicArrow
	case kindStream:
		// A stream starts with a continuation marker, or (before Arrow 0.15)
		// directly with the schema message's length, which must fit in the
		// file: else its first bytes are damaged, or it is no stream.
		if len(head) >= 4 && !bytes.HasPrefix(head, magicStream) && !bytes.HasPrefix(head, magicParquet) && !bytes.HasPrefix(head, magicArrow) {
			if n := int64(int32(binary.LittleEndian.Uint32(head))); n >= 8 && n <= t.size-4 {
				return nil
			}
			return stream.Errorf(t.path, 0, -1, "", stream.ErrFormat, "not an Arrow IPC stream: it starts with % x, neither the continuation marker ff ff ff ff nor a message length that fits the file (damaged, or another format)", head[:4])
		}
		want = magicStream
	}
	if !bytes.HasPrefix(head, want) {
		looks := "its first bytes match no columnar format"
		switch {
		case bytes.HasPrefix(head, magicParquet):
			looks = "it looks like a Parquet file (format parquet)"
		case bytes.HasPrefix(head, magicArrow):
			looks = "it looks like an Arrow IPC file (format arrow)"
		case bytes.HasPrefix(head, magicStream):
			looks = "it looks like an Arrow IPC stream (format arrow-stream)"
		case stream.Compression(head) != "":
			looks = "it is " + stream.Compression(head) + "-compressed (docword or text?)"
		}
		return stream.Errorf(t.path, 0, -1, "", stream.ErrFormat, "not %s: %s", name, looks)
	}
	if t.kind != kindStream && !bytes.HasSuffix(tail, want[:min(len(want), len(tail))]) {
		return stream.Errorf(t.path, 0, -1, "", stream.ErrCorrupt, "%s that does not end with its footer magic: truncated or damaged", name)
	}
	return nil
}

// guard runs fn, turning a panic inside the Arrow or Parquet decoders (which
// some damaged inputs provoke) into an error (stream.Safe): the goroutine
// that runs a decoder must run it through guard, or a panic ends the process.
func guard(fn func() error) error { return stream.Safe(fn) }

// columnError is an error met in one column of a row group or record batch;
// the pass names the column in the error it reports.
type columnError struct {
	col string
	err error
}

func (e *columnError) Error() string { return e.err.Error() }
func (e *columnError) Unwrap() error { return e.err }

// inColumn marks err as an error of column col (nil stays nil; an error
// that already names its position is left as it is).
func inColumn(col string, err error) error {
	var se *stream.Error
	var ce *columnError
	if err == nil || errors.As(err, &se) || errors.As(err, &ce) {
		return err
	}
	return &columnError{col, err}
}

// corrupt wraps a decoding error as ErrCorrupt naming the file (and the
// column, when the error is of one), unless it already is a positioned
// error or a cancellation. An error that says the file changed while it was
// read keeps that kind (stream.ErrChanged).
func corrupt(path string, err error) error {
	var se *stream.Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	col := ""
	if ce := (*columnError)(nil); errors.As(err, &ce) {
		col = ce.col
	}
	switch {
	case errors.Is(err, stream.ErrChanged):
	case errors.Is(err, stream.ErrCorrupt):
		err = fmt.Errorf("cannot decode: %w", err)
	default:
		err = fmt.Errorf("cannot decode: %v (%w)", err, stream.ErrCorrupt)
	}
	return &stream.Error{Path: path, Row: -1, Column: col, Err: err}
}

// fieldLeaves are the Parquet leaf columns of one top-level field.
type fieldLeaves struct {
	name   string
	leaves []int
}

// leaves lists the Parquet leaf column indices under each of the top-level
// fields named in cols, in the file's order (pqarrow selects columns by
// leaf).
func leaves(fr *pqarrow.FileReader, cols []string) []fieldLeaves {
	var out []fieldLeaves
	var walk func(f *pqarrow.SchemaField, into *fieldLeaves)
	walk = func(f *pqarrow.SchemaField, into *fieldLeaves) {
		if f.IsLeaf() {
			into.leaves = append(into.leaves, f.ColIndex)
		}
		for i := range f.Children {
			walk(&f.Children[i], into)
		}
	}
	for i := range fr.Manifest.Fields {
		if f := &fr.Manifest.Fields[i]; slices.Contains(cols, f.Field.Name) {
			fl := fieldLeaves{name: f.Field.Name}
			walk(f, &fl)
			slices.Sort(fl.leaves)
			out = append(out, fl)
		}
	}
	return out
}

// footerLen returns how to find the length of the footer of a file of
// kind k, with its length field and magic (nil: a stream has none).
func footerLen(k kind) func(f stream.File, size int64) (int64, error) {
	var tail int64 // the length field and the magic after the footer
	switch k {
	case kindParquet:
		tail = 8
	case kindArrow:
		tail = ipcFooterTail
	default:
		return nil
	}
	return func(f stream.File, size int64) (int64, error) {
		if size < tail {
			return 0, nil
		}
		var b [4]byte
		if _, err := f.ReadAt(b[:], size-tail); err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint32(b[:])) + tail, nil
	}
}

// checksum says what checks the stored bytes of t as a pass reads them.
func (t *table) checksum() string {
	switch t.kind {
	case kindParquet:
		if v := t.meta.KeyValueMetadata().FindValue(MetaRowGroupCRC); v != nil {
			return "CRC-32C of each row group (streamfit's)"
		}
		if t.pageCRCs() {
			return "CRC-32 of each page (the writer's)"
		}
		return "none: the writer stored no page CRCs, so a damaged page that still decodes goes unnoticed (compressed pages are mostly caught by their codec)"
	case kindArrow, kindStream:
		return "none: Arrow IPC has no checksum, so a damaged value goes unnoticed"
	}
	return ""
}

// pageCRCs reports whether the first page of the Parquet file's first
// column chunk holds a CRC (a writer that stores them stores them all).
func (t *table) pageCRCs() bool {
	if t.meta.NumRowGroups() == 0 || t.meta.Schema.NumColumns() == 0 {
		return false
	}
	f, err := stream.OpenFile(t.path)
	if err != nil {
		return false
	}
	defer f.Close()
	cc, err := t.meta.RowGroup(0).ColumnChunk(0)
	if err != nil {
		return false
	}
	start, size := chunkRange(cc)
	if start < 0 || size <= 0 {
		return false
	}
	tr := &thriftReader{r: bufio.NewReaderSize(io.NewSectionReader(f, start, size), 4<<10)}
	h, err := tr.readPageHeader()
	return err == nil && h.hasCRC
}
