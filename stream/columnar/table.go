package columnar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
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

	// plan, when set, makes Parquet passes read the lists or pairs layout
	// from the levels (parquet_lists.go) instead of through pqarrow.
	plan *[2]leafPlan
}

// openTable reads the schema (and the Parquet footer) of path.
func openTable(path string, k kind) (*table, error) {
	f, err := os.Open(path)
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
	err = guard(func() error {
		switch k {
		case kindParquet:
			pr, err := file.NewParquetReader(f)
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
			r, err := ipc.NewFileReader(f)
			if err != nil {
				return err
			}
			t.schema = r.Schema()
			t.chunks = r.NumRecords()
			r.Close()
		case kindStream:
			r, err := ipc.NewReader(f)
			if err != nil {
				return err
			}
			t.schema = r.Schema()
			r.Release()
		}
		return nil
	})
	if err != nil {
		return nil, corrupt(path, err)
	}
	return t, nil
}

// guard runs fn, turning a panic inside the Arrow or Parquet decoders (which
// some damaged inputs provoke) into an error.
func guard(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return fn()
}

// corrupt wraps a decoding error as ErrCorrupt naming the file, unless it
// already is a positioned error or a cancellation.
func corrupt(path string, err error) error {
	var se *stream.Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "%s: %v", "cannot decode", err)
}

// leaves lists the Parquet leaf column indices under the top-level fields
// named in cols (pqarrow selects columns by leaf).
func leaves(fr *pqarrow.FileReader, cols []string) []int {
	var out []int
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if f.IsLeaf() {
			out = append(out, f.ColIndex)
		}
		for i := range f.Children {
			walk(&f.Children[i])
		}
	}
	for i := range fr.Manifest.Fields {
		if slices.Contains(cols, fr.Manifest.Fields[i].Field.Name) {
			walk(&fr.Manifest.Fields[i])
		}
	}
	slices.Sort(out)
	return out
}

// piece is one unit of parallel work: a row group or an IPC record batch.
type piece struct {
	idx int
	rec arrow.RecordBatch // already read, for IPC streams
}

// loaded is a piece's records, with the bytes of the file they came from.
type loaded struct {
	recs  []arrow.RecordBatch
	bytes int64
	// lists holds the terms and counts leaves read from the levels, instead
	// of recs, when the table has a plan.
	lists *[2]rawList
}

var rawPool = sync.Pool{New: func() any { return new([2]rawList) }}

func (l loaded) release() {
	for _, r := range l.recs {
		r.Release()
	}
	if l.lists != nil {
		rawPool.Put(l.lists)
	}
}

// pass runs one pass over t reading only the columns named in cols: pieces are
// loaded and handed to decode by o.Workers goroutines, and the results come out
// in file order. decode must not keep the records; release frees results that
// were never yielded.
func pass[R any](ctx context.Context, t *table, o stream.Options, cols []string,
	decode func(l loaded) (R, error), release func(R)) iter.Seq2[R, error] {
	return func(yield func(R, error) bool) {
		var zero R
		f, err := os.Open(t.path)
		if err != nil {
			yield(zero, err)
			return
		}
		defer f.Close()
		var (
			split func(ctx context.Context, emit func(piece) bool) error
			load  func(ctx context.Context, p piece) (loaded, error)
		)
		switch t.kind {
		case kindParquet:
			split, load, err = parquetPieces(f, t, o, cols)
		case kindArrow:
			var unmap func()
			split, load, unmap, err = arrowPieces(f, t, o)
			if unmap != nil {
				defer unmap() // runs after Ordered has stopped every worker
			}
		case kindStream:
			split, load, err = streamPieces(f, t, o)
		}
		if err != nil {
			yield(zero, corrupt(t.path, err))
			return
		}
		work := func(ctx context.Context, p piece) (R, error) {
			var r R
			err := guard(func() error {
				l, err := load(ctx, p)
				if err != nil {
					return corrupt(t.path, err)
				}
				defer l.release()
				r, err = decode(l)
				if err == nil {
					o.Progress.Add(0, l.bytes)
				}
				return err
			})
			if err != nil {
				return r, corrupt(t.path, err)
			}
			return r, nil
		}
		for r, err := range stream.Ordered(ctx, o.Workers, split, work, release) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

func emitRange(n int) func(ctx context.Context, emit func(piece) bool) error {
	return func(ctx context.Context, emit func(piece) bool) error {
		for i := range n {
			if !emit(piece{idx: i}) {
				return nil
			}
		}
		return nil
	}
}

// parquetPieces reads row groups. Each worker takes a pqarrow reader from a
// small pool: they share the parsed footer and the file handle (ReadAt is safe
// for concurrent use) but not their decoding state.
func parquetPieces(f *os.File, t *table, o stream.Options, cols []string) (func(context.Context, func(piece) bool) error, func(context.Context, piece) (loaded, error), error) {
	type reader struct {
		*pqarrow.FileReader
		sc listScratch
	}
	pool := make(chan *reader, o.Workers)
	// pqarrow's record reader shifts its buffers after every batch, so a whole
	// row group is read as one batch (measured: 4096-row batches were 10× slower).
	var most int64
	for i := range t.chunks {
		most = max(most, t.meta.RowGroup(i).NumRows())
	}
	newReader := func() (*reader, error) {
		pr, err := file.NewParquetReader(f, file.WithMetadata(t.meta))
		if err != nil {
			return nil, err
		}
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: max(most, 1)}, memory.DefaultAllocator)
		return &reader{FileReader: fr}, err
	}
	first, err := newReader()
	if err != nil {
		return nil, nil, err
	}
	pool <- first
	colIdx := leaves(first.FileReader, cols)
	load := func(ctx context.Context, p piece) (loaded, error) {
		var fr *reader
		select {
		case fr = <-pool:
		default:
			var err error
			if fr, err = newReader(); err != nil {
				return loaded{}, err
			}
		}
		defer func() {
			select {
			case pool <- fr:
			default:
			}
		}()
		if t.plan != nil {
			rg := fr.ParquetReader().RowGroup(p.idx)
			rows := t.meta.RowGroup(p.idx).NumRows()
			l := loaded{lists: rawPool.Get().(*[2]rawList), bytes: rowGroupBytes(t.meta, p.idx)}
			for i := range 2 {
				var err error
				if l.lists[i], err = readList(rg, t.plan[i], rows, &fr.sc, l.lists[i]); err != nil {
					l.release()
					return loaded{}, err
				}
			}
			return l, nil
		}
		tbl, err := fr.ReadRowGroups(ctx, colIdx, []int{p.idx})
		if err != nil {
			return loaded{}, err
		}
		defer tbl.Release()
		tr := array.NewTableReader(tbl, int64(max(o.BatchRows, 1<<14)))
		defer tr.Release()
		var l loaded
		for tr.Next() {
			r := tr.RecordBatch()
			r.Retain()
			l.recs = append(l.recs, r)
		}
		if err := tr.Err(); err != nil && err != io.EOF {
			l.release()
			return loaded{}, err
		}
		l.bytes = rowGroupBytes(t.meta, p.idx)
		return l, nil
	}
	return emitRange(t.chunks), load, nil
}

func rowGroupBytes(md *metadata.FileMetaData, i int) int64 {
	rg := md.RowGroup(i)
	var n int64
	for c := range rg.NumColumns() {
		if cc, err := rg.ColumnChunk(c); err == nil {
			n += cc.TotalCompressedSize()
		}
	}
	return n
}

// arrowPieces reads the record batches of an IPC file; RecordBatchAt is safe
// for concurrent use.
func arrowPieces(f *os.File, t *table, o stream.Options) (split func(context.Context, func(piece) bool) error, load func(context.Context, piece) (loaded, error), unmap func(), err error) {
	// Map the file so record batches point into the page cache instead of
	// being copied into fresh buffers (profiled: read syscalls, zeroing and
	// copying were ~40% of a pass). The mapping ends with the pass; batches
	// handed out are copies. Falls back to ReadAt where mmap fails.
	var r *ipc.FileReader
	if data, err := syscall.Mmap(int(f.Fd()), 0, int(t.size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
		r, err = ipc.NewMappedFileReader(data)
		if err != nil {
			syscall.Munmap(data)
			return nil, nil, nil, err
		}
		unmap = func() { syscall.Munmap(data) }
	} else if r, err = ipc.NewFileReader(f); err != nil {
		return nil, nil, nil, err
	}
	n := r.NumRecords()
	per := t.size / int64(max(n, 1))
	load = func(ctx context.Context, p piece) (loaded, error) {
		rec, err := r.RecordBatchAt(p.idx)
		if err != nil {
			return loaded{}, err
		}
		return loaded{recs: []arrow.RecordBatch{rec}, bytes: per}, nil
	}
	return emitRange(n), load, unmap, nil
}

// countingReader counts the bytes an IPC stream reader consumes.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// streamPieces reads an IPC stream sequentially in the splitter and hands each
// record batch to the workers for conversion.
func streamPieces(f *os.File, t *table, o stream.Options) (func(context.Context, func(piece) bool) error, func(context.Context, piece) (loaded, error), error) {
	cr := &countingReader{r: f}
	r, err := ipc.NewReader(cr)
	if err != nil {
		return nil, nil, err
	}
	split := func(ctx context.Context, emit func(piece) bool) error {
		defer r.Release()
		last := cr.n
		for i := 0; ; i++ {
			var ok bool
			err := guard(func() error { ok = r.Next(); return nil })
			if err != nil {
				return corrupt(t.path, err)
			}
			if !ok {
				break
			}
			rec := r.RecordBatch()
			rec.Retain()
			by := cr.n - last
			last = cr.n
			if !emit(piece{idx: i, rec: recWithBytes{rec, by}}) {
				rec.Release()
				return nil
			}
		}
		if err := r.Err(); err != nil && err != io.EOF {
			return corrupt(t.path, err)
		}
		return nil
	}
	load := func(ctx context.Context, p piece) (loaded, error) {
		rb := p.rec.(recWithBytes)
		return loaded{recs: []arrow.RecordBatch{rb.RecordBatch}, bytes: rb.bytes}, nil
	}
	return split, load, nil
}

// recWithBytes carries the stream bytes a record batch took.
type recWithBytes struct {
	arrow.RecordBatch
	bytes int64
}
