package columnar

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamfit/streamfit/stream"
)

// piece is one unit of parallel work: a row group or an IPC record batch.
type piece struct {
	idx int
	rec arrow.RecordBatch // already read, for IPC streams
}

// loaded is a run of at most a batch of rows cut from a piece, with the bytes
// of the file it stands for. A loader hands it to the layout's decoder, which
// must copy what it keeps: the records are released afterwards.
type loaded struct {
	recs  []arrow.RecordBatch
	bytes int64
	// docs, set instead of recs when the table has a plan, holds the rows of
	// the lists or pairs layout read from the Parquet levels (parquet_lists.go):
	// the term ids as CSR and the counts, not yet checked. coff are the
	// counts' own row offsets, which must equal docs.Offsets; tbad and cbad
	// are the first rejected entries of each column. The decoder owns docs.
	docs       *stream.Docs
	coff       []int
	tbad, cbad *badEntry
	// free recycles the pass's document batches (nil: the shared pool).
	free *stream.FreeList
}

// newDocs returns an empty document batch from free (nil: the shared pool).
func newDocs(free *stream.FreeList, start int64) *stream.Docs {
	if free != nil {
		return free.Get(start)
	}
	return stream.NewDocs(start)
}

func (l loaded) release() {
	for _, r := range l.recs {
		r.Release()
	}
}

// rows is the number of rows of the table the run holds.
func (l loaded) rows() int64 {
	if l.docs != nil {
		return int64(l.docs.Len())
	}
	var n int64
	for _, r := range l.recs {
		n += r.NumRows()
	}
	return n
}

// loader reads the work item p as runs of at most rows(n, entries) rows,
// n and entries being the piece's rows and list values, handing each to
// each in order; it stops at the first error each returns.
type loader func(ctx context.Context, p piece, rows runRows, each func(loaded) error) error

// runRows is the most rows of a run cut from a piece of n rows whose
// columns hold entries list values (the most of any column read). It
// depends on the piece alone, so a pass over a range of pieces cuts them
// as a pass over the whole file does.
type runRows func(n, entries int64) int

// fixedRows cuts every piece in runs of rows rows.
func fixedRows(rows int) runRows { return func(int64, int64) int { return max(rows, 1) } }

// errStop says the pass is stopping; a loader returns it as is.
var errStop = errors.New("pass stopped")

// pass runs one pass over t reading only the columns named in cols. Work
// items (row groups, record batches) are loaded by o.Workers goroutines as
// runs of at most rows(…) rows, each turned into one result by decode; results
// come out in file order. In-flight memory is bounded by o.InflightBytes
// (stream.OrderedBudget) as measured by size, not by the size of the file's
// row groups. decode must not keep the records; release frees results that
// were never yielded. Document batches come from free (nil: the shared pool).
func pass[R any](ctx context.Context, t *table, o stream.Options, cols []string, rows runRows, free *stream.FreeList,
	decode func(l loaded) (R, error), size func(R) int64, release func(R)) iter.Seq2[R, error] {
	return func(yield func(R, error) bool) {
		var zero R
		if err := t.stamp.Check(); err != nil {
			yield(zero, err)
			return
		}
		f, err := stream.OpenFile(t.path)
		if err != nil {
			yield(zero, err)
			return
		}
		defer f.Close()
		var (
			split func(ctx context.Context, emit func(piece, int64) bool) error
			load  loader
			unit  = "row group"
		)
		var unmap func()
		// The readers parse the footer (of a mapped file, for Arrow) here,
		// on the consumer's goroutine.
		err = guard(func() (err error) {
			switch t.kind {
			case kindParquet:
				split, load, err = parquetPieces(f, t, o, cols, rows, free)
			case kindArrow:
				split, load, unmap, err = arrowPieces(f, t)
				unit = "record batch"
			case kindStream:
				split, load, err = streamPieces(f, t)
				unit = "record batch"
			}
			return err
		})
		if unmap != nil {
			defer unmap() // runs after the pass has stopped every worker
		}
		if err != nil {
			yield(zero, corrupt(t.path, err))
			return
		}
		work := func(ctx context.Context, p piece, emit func(R, int64) bool) error {
			err := guard(func() error {
				return load(ctx, p, rows, func(l loaded) error {
					l.free = free
					r, err := decode(l)
					l.release()
					if err != nil {
						return err
					}
					o.Progress.Add(0, l.bytes)
					if !emit(r, size(r)) {
						return errStop
					}
					return nil
				})
			})
			if err == nil || errors.Is(err, errStop) {
				return nil
			}
			var se *stream.Error
			if !errors.As(err, &se) {
				err = fmt.Errorf("%s %d: %w", unit, p.idx, err)
			}
			return corrupt(t.path, err)
		}
		budget := o.InflightBytes
		for r, err := range stream.OrderedBudget(ctx, o.Workers, budget, split, work, release) {
			if !yield(r, err) || err != nil {
				return
			}
		}
		// A file changed while the pass read it fails the pass.
		if err := t.stamp.Check(); err != nil {
			yield(zero, err)
		}
	}
}

// share splits a piece's bytes among its runs for progress: the run ending at
// row end of n gets share(bytes, end, n) - share(bytes, start, n).
func share(bytes, rows, n int64) int64 {
	if n <= 0 {
		return bytes
	}
	return bytes * rows / n
}
