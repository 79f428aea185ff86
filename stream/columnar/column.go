package columnar

import (
	"context"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// IDs is a run of values of an id column, in row order: Ints for an
// integer column, Strings for a string column (the other is nil).
type IDs struct {
	Ints    []int64
	Strings []string
}

// Len is the number of values.
func (v IDs) Len() int { return max(len(v.Ints), len(v.Strings)) }

// IDColumn is one column of a Parquet or Arrow table (a file, or a
// dataset directory of them) read on its own: the documents' ids that an
// output following the table's rows carries along.
type IDColumn struct {
	// String is true for a string column, false for an integer one.
	String bool
	col    string
	files  []string
	kind   kind
	runs   bool
}

// idRows is the number of values read at a time.
const idRows = 1 << 16

// OpenIDColumn checks that the table at path (a Parquet or Arrow IPC file,
// or a dataset directory of them) has the column col of integers or
// strings, without nulls. With runs, each run of equal consecutive values
// counts once, as the documents of a long (doc, term, count) table: its
// doc column names them.
func OpenIDColumn(path, col string, runs bool) (*IDColumn, error) {
	st, err := stream.StatFile(path)
	if err != nil {
		return nil, err
	}
	c := &IDColumn{col: col, files: []string{path}, runs: runs}
	if st.IsDir() {
		c.files, c.kind, err = datasetParts(path)
	} else {
		c.kind, err = fileKind(path)
	}
	if err != nil {
		return nil, err
	}
	for i, f := range c.files {
		t, err := openTable(f, c.kind)
		if err != nil {
			return nil, err
		}
		fl, ok := field(t.schema, col)
		if !ok {
			return nil, schemaErr(f, col, t.schema, "missing id column %q", col)
		}
		isStr := fl.Type.ID() == arrow.STRING || fl.Type.ID() == arrow.LARGE_STRING
		if !isStr && !arrow.IsInteger(fl.Type.ID()) {
			return nil, schemaErr(f, col, t.schema, "id column %q has type %s, want integers or strings", col, fl.Type)
		}
		if i == 0 {
			c.String = isStr
		} else if isStr != c.String {
			return nil, schemaErr(f, col, t.schema, "id column %q has type %s, unlike in %s", col, fl.Type, c.files[0])
		}
	}
	return c, nil
}

// fileKind is the container format of a Parquet or Arrow file, from its
// content (or, failing that, its name).
func fileKind(path string) (kind, error) {
	k, name, ok, err := detectKind(path, "")
	if err != nil || ok {
		return k, err
	}
	return 0, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "is %s: id columns are read from Parquet or Arrow tables", name)
}

// Values reads the column once, in row order, in runs of at most 65,536
// values. A null is an error naming its row.
func (c *IDColumn) Values(ctx context.Context) iter.Seq2[IDs, error] {
	return func(yield func(IDs, error) bool) {
		var row int64
		var scratch []int64
		r := idRuns{on: c.runs}
		for _, f := range c.files {
			for arr, err := range columnArrays(ctx, f, c.kind, c.col) {
				if err != nil {
					yield(IDs{}, err)
					return
				}
				if i := firstNull(arr); i >= 0 {
					arr.Release()
					yield(IDs{}, stream.Errorf(f, 0, row+int64(i), c.col, stream.ErrSchema, "null id"))
					return
				}
				row += int64(arr.Len())
				var v IDs
				// A damaged array's values may not match its length.
				err := guard(func() error {
					if c.String {
						for i := range arr.Len() {
							v.Strings = r.addString(v.Strings, idString(arr, i))
						}
						return nil
					}
					var ints []int64
					ints, scratch = int64s(arr, scratch)
					for _, n := range ints[:arr.Len()] {
						v.Ints = r.addInt(v.Ints, n)
					}
					return nil
				})
				arr.Release()
				if err != nil {
					yield(IDs{}, corrupt(f, err))
					return
				}
				if v.Len() > 0 && !yield(v, nil) {
					return
				}
			}
		}
	}
}

// idRuns drops, when on, each value equal to the one before it (across
// the runs a column is read in).
type idRuns struct {
	on, seen bool
	lastInt  int64
	lastStr  string
}

func (r *idRuns) addInt(v []int64, n int64) []int64 {
	if r.on && r.seen && n == r.lastInt {
		return v
	}
	r.lastInt, r.seen = n, true
	return append(v, n)
}

func (r *idRuns) addString(v []string, s string) []string {
	if r.on && r.seen && s == r.lastStr {
		return v
	}
	r.lastStr, r.seen = s, true
	return append(v, s)
}

// idString is the string at i of a string or large string array.
func idString(a arrow.Array, i int) string {
	if s, ok := a.(*array.String); ok {
		return s.Value(i)
	}
	return a.(*array.LargeString).Value(i)
}

// drain hands each record batch of r to each until each returns false or
// r ends.
func drain(ctx context.Context, r array.RecordReader, each func(arrow.RecordBatch) bool) error {
	for r.Next() {
		if !each(r.RecordBatch()) {
			return nil
		}
	}
	if err := r.Err(); err != nil && err != io.EOF {
		return err
	}
	return ctx.Err()
}

// columnArrays yields the column col of the file at path (of container k), a record batch
// (or a run of Parquet rows) at a time; the caller releases each array.
func columnArrays(ctx context.Context, path string, k kind, col string) iter.Seq2[arrow.Array, error] {
	return func(yield func(arrow.Array, error) bool) {
		f, err := stream.OpenFile(path)
		if err != nil {
			yield(nil, err)
			return
		}
		defer f.Close()
		// each hands one record batch's column on; false stops the pass.
		// It calls the consumer's loop body inside guard (see
		// stream.SafeYield).
		body := stream.NewSafeYield(yield)
		each := func(rec arrow.RecordBatch) bool {
			a := column(rec, col)
			if a == nil {
				body.Yield(nil, stream.Errorf(path, 0, -1, col, stream.ErrSchema, "missing id column %q", col))
				return false
			}
			a.Retain()
			return body.Yield(a, nil)
		}
		err = guard(func() error {
			switch k {
			case kindParquet:
				pr, err := openParquet(f)
				if err != nil {
					return err
				}
				fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: idRows}, memory.DefaultAllocator)
				if err != nil {
					return err
				}
				leaf := pr.MetaData().Schema.ColumnIndexByName(col)
				if leaf < 0 {
					return stream.Errorf(path, 0, -1, col, stream.ErrSchema, "missing id column %q", col)
				}
				rr, err := fr.GetRecordReader(ctx, []int{leaf}, nil)
				if err != nil {
					return err
				}
				defer rr.Release()
				return drain(ctx, rr, each)
			case kindArrow:
				r, err := openIPCFile(f, size(f))
				if err != nil {
					return err
				}
				defer r.Close()
				blocks, blocksErr := ipcBlocks(f, size(f))
				for i := range r.NumRecords() {
					if err := checkBlock(f, blocks, blocksErr, i); err != nil {
						return err
					}
					rec, err := r.RecordBatch(i)
					if err != nil {
						return err
					}
					if !each(rec) {
						return nil
					}
				}
			case kindStream:
				r, err := newStreamReader(f, size(f))
				if err != nil {
					return err
				}
				defer r.Release()
				return drain(ctx, r, each)
			}
			return ctx.Err()
		})
		if err != nil {
			body.Resume(err)
			yield(nil, corrupt(path, err))
		}
	}
}
