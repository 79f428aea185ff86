package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/internal/stream"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
)

func init() {
	register("infer", "document topics: each document's topic shares under a fitted lda/topic model, as Parquet", runInfer)
}

func runInfer(ctx context.Context, args []string) error {
	fs := newFlags("infer", "", `Infers the topic shares of every document of --input with the model's topics
fixed (lda: the posterior mean of θ, γ/Σγ of the variational E-step; topic: the
posterior probability of each topic) and writes them as Parquet (zstd), one row
per document in input order:

  doc    int64          the document's index in the input (from 0)
  theta  list<double>   its k topic shares (sum 1), in the model's topic order

Topics are smoothed as for eval --heldout (mixed with the uniform distribution
by 0.001). Streamed: memory is a batch per worker, whatever the input's size.`)
	o := addReadFlags(fs)
	addDocFlags(fs, o)
	modelPath := fs.String("model", "model.json", "fitted lda or topic model")
	input := fs.String("input", "", "documents (any format of `streamfit inspect`), or a directory of text files")
	out := fs.String("out", "theta.parquet", "output Parquet file")
	prog := addProgressFlag(fs)
	pos, err := parse(fs, args)
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
	m, err := models.Read(*modelPath)
	if err != nil {
		return err
	}
	p, err := lda.ModelParams(m, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", *modelPath, err)
	}
	start := time.Now()
	pr, done := startProgress(*prog, "infer", fileSize(*input))
	defer done()
	o.Progress = pr
	src, err := stream.Open(*input, *o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	n, err := inferTo(ctx, src, m, p, o.Workers, *out)
	if err != nil {
		return err
	}
	done()
	fmt.Fprintf(os.Stderr, "infer: topic shares of %d documents under %d topics in %.1fs → %s\n", n, m.K, time.Since(start).Seconds(), *out)
	return nil
}

// inferTo writes the topic shares of src's documents under m (with
// parameters p) to the Parquet file out, atomically, and returns the
// number of documents.
func inferTo(ctx context.Context, src stream.DocSource, m *models.Model, p *implicit.TopicParams, workers int, out string) (int64, error) {
	w, err := newThetaWriter(out, m)
	if err != nil {
		return 0, err
	}
	var n int64
	err = lda.Infer(ctx, src, p, workers, func(first int64, docs int, theta []float64) error {
		n += int64(docs)
		return w.add(first, docs, theta)
	})
	if err == nil {
		err = w.commit()
	} else {
		w.abort()
	}
	return n, err
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
	list *array.ListBuilder
	vals *array.Float64Builder
	rows int
}

func newThetaWriter(path string, m *models.Model) (*thetaWriter, error) {
	md := arrow.NewMetadata([]string{"streamfit.d", "streamfit.k", "streamfit.model"}, []string{strconv.Itoa(m.D), strconv.Itoa(m.K), m.Model})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "doc", Type: arrow.PrimitiveTypes.Int64},
		{Name: "theta", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, &md)
	f, w, err := models.CreateParquet(path, schema)
	if err != nil {
		return nil, err
	}
	t := &thetaWriter{path: path, k: m.K, f: f, w: w, b: array.NewRecordBuilder(memory.NewGoAllocator(), schema)}
	t.doc = t.b.Field(0).(*array.Int64Builder)
	t.list = t.b.Field(1).(*array.ListBuilder)
	t.vals = t.list.ValueBuilder().(*array.Float64Builder)
	return t, nil
}

// add appends n documents from first with their shares (k each).
func (t *thetaWriter) add(first int64, n int, theta []float64) error {
	for i := range n {
		t.doc.Append(first + int64(i))
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
