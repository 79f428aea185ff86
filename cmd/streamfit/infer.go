package main

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/internal/stream"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/text"
)

// inferAbout is the help of `streamfit infer`.
const inferAbout = `Infers the topic shares of every document of --input with the model's topics
fixed (lda: the posterior mean of θ, γ/Σγ of the variational E-step; topic: the
posterior probability of each topic) and writes them as Parquet (zstd), one row
per document in input order:

  doc    int64          the document's index in the input (from 0)
  id     int64|string   with --id-column: that column of the input (Parquet or
                        Arrow, a file or a dataset directory), so the shares join
                        back to the documents; of a long (doc, term, count) table,
                        its doc column; of a directory of text files, with
                        --id-column path, each file's path under it
  theta  list<double>   its k topic shares (sum 1), in the model's topic order

Topics are smoothed as for eval --heldout (mixed with the uniform distribution
by 0.001). Streamed: memory is a batch per worker, whatever the input's size.`

func runInfer(ctx context.Context, e *env, args []string) error {
	fs := newFlags("infer", "", inferAbout)
	o := e.addReadFlags(fs)
	addDocFlags(fs, o)
	modelPath := fs.String("model", "model.json", "fitted lda or topic model")
	input := fs.String("input", "", "documents (any format of `streamfit inspect`), or a directory of text files")
	out := fs.String("out", "theta.parquet", "output Parquet file")
	idColumn := fs.String("id-column", "", "copy this integer or string column of a Parquet or Arrow --input (one value per document; of a long table, its --doc-column) into the output as id; path: the file names of a directory of text files")
	prog := addProgressFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if *input == "" && len(pos) == 1 {
		*input = pos[0]
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *input == "" {
		return usagef("--input is required")
	}
	if err := checkOutputs([]string{*modelPath, *input, o.VocabPath}, *out); err != nil {
		return err
	}
	k, m, err := inferModel(*modelPath)
	if err != nil {
		return err
	}
	start := time.Now()
	pr, done := e.startProgress(*prog, "infer", fileSize(*input))
	defer done()
	o.Progress = pr
	src, err := stream.Open(*input, *o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	var ids *idSource
	if *idColumn != "" {
		if ids, err = openIDs(src.Info(), *input, *idColumn, o.DocColumn); err != nil {
			return err
		}
	}
	n, err := inferTo(ctx, src, k, m, o.Workers, *out, ids)
	if err != nil {
		return err
	}
	done()
	nk, _ := k.Shape(m)
	e.printf("infer: topic shares of %d documents under %d topics in %.1fs → %s\n", n, nk, time.Since(start).Seconds(), *out)
	return nil
}

// inferModel reads the model file at path by its kind, which must give
// documents shares (models.Inferring).
func inferModel(path string) (models.Inferring, models.Fitted, error) {
	name, err := modelKind(path)
	if err != nil {
		return nil, nil, err
	}
	k, err := models.Lookup(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	inf, ok := k.(models.Inferring)
	if !ok {
		return nil, nil, fmt.Errorf("%s: a %q model: infer gives the documents' shares under a topic model", path, name)
	}
	m, err := k.Read(path)
	if err != nil {
		return nil, nil, err
	}
	return inf, m, nil
}

// idSource is where infer --id-column takes the documents' ids from, in
// document order.
type idSource struct {
	String bool // strings, else integers
	Values func(context.Context) iter.Seq2[columnar.IDs, error]
}

// dirIDs names the documents of a directory of text files by their paths.
func dirIDs(root string) *idSource {
	return &idSource{String: true, Values: func(ctx context.Context) iter.Seq2[columnar.IDs, error] {
		return func(yield func(columnar.IDs, error) bool) {
			var v columnar.IDs
			for p, err := range text.DirPaths(ctx, root) {
				if err != nil {
					yield(v, err)
					return
				}
				if v.Strings = append(v.Strings, p); len(v.Strings) == stream.DefaultBatchRows {
					if !yield(v, nil) {
						return
					}
					v = columnar.IDs{}
				}
			}
			if len(v.Strings) > 0 {
				yield(v, nil)
			}
		}
	}}
}

// openIDs opens the ids of the input at path (src's info) that col names:
// a column of a Parquet or Arrow table (of a long table, only its doc
// column, whose runs are the documents), or "path", the files of a
// directory of text files; anything else is a usage error.
func openIDs(info stream.Info, path, col, docCol string) (*idSource, error) {
	switch info.Format {
	case columnar.FormatParquet, columnar.FormatArrow, columnar.FormatArrowStream, columnar.FormatDataset:
	case "text-dir":
		if col != "path" {
			return nil, usagef("--id-column %s: a directory of text files names its documents by their paths: --id-column path", col)
		}
		return dirIDs(path), nil
	default:
		return nil, usagef("--id-column reads a column of a Parquet or Arrow table, or the paths of a directory of text files (--id-column path); %s is %s", path, info.Format)
	}
	long := info.Layout == columnar.LayoutLong
	if long && col != docCol {
		return nil, usagef("--id-column %s: a long (doc, term, count) table names its documents by its doc column, %q", col, docCol)
	}
	if info.Layout == columnar.LayoutText {
		return nil, usagef("--id-column reads a table of documents; %s holds raw text, whose rows the tokenizer keeps in order: use the doc index", path)
	}
	c, err := columnar.OpenIDColumn(path, col, long)
	if err != nil {
		return nil, err
	}
	return &idSource{String: c.String, Values: c.Values}, nil
}

// inferTo writes the shares of src's documents under the model m of kind k
// to the Parquet file out, atomically, and returns the number of
// documents; with ids, each document's id from that column too.
func inferTo(ctx context.Context, src stream.DocSource, k models.Inferring, m models.Fitted, workers int, out string, ids *idSource) (int64, error) {
	w, err := newThetaWriter(out, k, m, ids)
	if err != nil {
		return 0, err
	}
	var n int64
	var cur *idCursor
	if ids != nil {
		cur = newIDCursor(ctx, ids, src.Info().Path)
		defer cur.stop()
	}
	err = k.Infer(ctx, m, src, workers, func(first int64, docs int, theta []float64) error {
		v, err := cur.take(docs)
		if err != nil {
			return err
		}
		n += int64(docs)
		return w.add(first, docs, theta, v)
	})
	if err == nil {
		err = cur.finish(n)
	}
	if err == nil {
		err = w.commit()
	} else {
		w.abort()
	}
	return n, err
}

// idCursor hands the ids of an idSource out a batch of documents at a time.
// A nil cursor hands out none.
type idCursor struct {
	path           string
	string         bool
	next           func() (columnar.IDs, error, bool)
	stop           func()
	pending, batch columnar.IDs
}

func newIDCursor(ctx context.Context, ids *idSource, path string) *idCursor {
	next, stop := iter.Pull2(ids.Values(ctx))
	return &idCursor{path: path, string: ids.String, next: next, stop: stop}
}

// take returns the ids of the next n documents (valid until the next call).
func (c *idCursor) take(n int) (columnar.IDs, error) {
	if c == nil {
		return columnar.IDs{}, nil
	}
	c.batch.Ints, c.batch.Strings = c.batch.Ints[:0], c.batch.Strings[:0]
	for n > 0 {
		if c.pending.Len() == 0 {
			v, err, ok := c.next()
			if err != nil {
				return c.batch, err
			}
			if !ok {
				return c.batch, fmt.Errorf("%s: the id column has fewer values than the input has documents", c.path)
			}
			c.pending = v
		}
		m := min(n, c.pending.Len())
		if c.string {
			c.batch.Strings = append(c.batch.Strings, c.pending.Strings[:m]...)
			c.pending.Strings = c.pending.Strings[m:]
		} else {
			c.batch.Ints = append(c.batch.Ints, c.pending.Ints[:m]...)
			c.pending.Ints = c.pending.Ints[m:]
		}
		n -= m
	}
	return c.batch, nil
}

// finish reports ids left over after the input's docs documents.
func (c *idCursor) finish(docs int64) error {
	if c == nil {
		return nil
	}
	if _, _, more := c.next(); more || c.pending.Len() > 0 {
		return fmt.Errorf("%s: the id column has more values than the input has documents (%d)", c.path, docs)
	}
	return nil
}

// thetaRows is the number of documents per Parquet row group.
const thetaRows = 1 << 16

// thetaWriter writes document topic shares to a Parquet file, atomically,
// one row group per thetaRows documents.
type thetaWriter struct {
	path string
	k    int
	f    *stream.AtomicFile
	w    *pqarrow.FileWriter
	b    *array.RecordBuilder
	doc  *array.Int64Builder
	ids  array.Builder // the id column, when asked for
	list *array.ListBuilder
	vals *array.Float64Builder
	rows int
}

func newThetaWriter(path string, kind models.Inferring, m models.Fitted, ids *idSource) (*thetaWriter, error) {
	k, d := kind.Shape(m)
	md := arrow.NewMetadata([]string{"streamfit.d", "streamfit.k", "streamfit.model"}, []string{strconv.Itoa(d), strconv.Itoa(k), kind.(models.Kind).Name()})
	fields := []arrow.Field{{Name: "doc", Type: arrow.PrimitiveTypes.Int64}}
	if ids != nil {
		var typ arrow.DataType = arrow.PrimitiveTypes.Int64
		if ids.String {
			typ = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: "id", Type: typ})
	}
	fields = append(fields, arrow.Field{Name: "theta", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)})
	schema := arrow.NewSchema(fields, &md)
	f, w, err := models.CreateParquet(path, schema)
	if err != nil {
		return nil, err
	}
	t := &thetaWriter{path: path, k: k, f: f, w: w, b: array.NewRecordBuilder(memory.NewGoAllocator(), schema)}
	t.doc = t.b.Field(0).(*array.Int64Builder)
	if ids != nil {
		t.ids = t.b.Field(1)
	}
	t.list = t.b.Field(len(fields) - 1).(*array.ListBuilder)
	t.vals = t.list.ValueBuilder().(*array.Float64Builder)
	return t, nil
}

// add appends n documents from first with their shares (k each) and,
// with an id column, their ids.
func (t *thetaWriter) add(first int64, n int, theta []float64, ids columnar.IDs) error {
	for i := range n {
		t.doc.Append(first + int64(i))
		switch b := t.ids.(type) {
		case *array.Int64Builder:
			b.Append(ids.Ints[i])
		case *array.StringBuilder:
			b.Append(ids.Strings[i])
		}
		t.list.Append(true)
		t.vals.AppendValues(theta[i*t.k:(i+1)*t.k], nil)
		if t.rows++; t.rows == thetaRows {
			if err := t.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes the buffered rows as one row group.
func (t *thetaWriter) flush() error {
	if t.rows == 0 {
		return nil
	}
	rec := t.b.NewRecordBatch()
	defer rec.Release()
	t.rows = 0
	if err := t.w.Write(rec); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	return nil
}

func (t *thetaWriter) commit() error {
	err := t.flush()
	if cerr := t.w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", t.path, cerr)
	}
	t.b.Release()
	if err != nil {
		t.f.Abort()
		return err
	}
	return t.f.Commit()
}

func (t *thetaWriter) abort() {
	t.w.Close()
	t.b.Release()
	t.f.Abort()
}
