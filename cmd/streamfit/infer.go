package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/text"
)

// inferAbout is the help of `streamfit infer`.
const inferAbout = `Gives every document (or sample row) of --input its shares of the model's
components, with the model fixed, and writes them one row per document in
input order:

  lda     the topic shares of each document: the posterior mean of θ, γ/Σγ of
          the variational E-step (gensim's get_document_topics, scikit-learn's
          transform)
  topic   the posterior probability of each topic
  gmm     each row's component responsibilities, the posterior probability of
          each component (scikit-learn's predict_proba); --input holds dense
          rows (--values-column, --columns)
  hmm     each time step's state posteriors given its whole sequence
          (forward–backward; hmmlearn's predict_proba): --input holds one
          row per step, the sequence id in --group-column; one-hot rows are
          symbols, others Gaussian around the state means with one variance
          estimated from the rows

Topics are smoothed as for eval --heldout (mixed with the uniform distribution
by 0.001). Raw text is tokenized against --vocab, else against the vocabulary
the model file holds.

--out chooses the format by its extension: .parquet (zstd), .csv, .tsv,
.jsonl or .ndjson (JSON Lines); - writes CSV to standard output; --out-format
overrides either. The columns (row for gmm and hmm, component for topic; an hmm's components are its states):

  doc         int64          the document's index in the input (from 0)
  id          int64|string   with --id-column: that column of the input (Parquet
                             or Arrow, a file or a dataset directory), so the
                             shares join back to the documents; of a long (doc,
                             term, count) table, its doc column; of a directory
                             of text files, with --id-column path, each file's
                             path under it
  theta       list<double>   its k shares (sum 1), in the model's order: in CSV
                             and TSV the columns topic_0 … topic_{k-1}, in JSON
                             Lines an array

With --top N, each document's N largest shares instead, one row per (document,
topic), largest first (ties: the lower topic first):

  doc, id     as above
  topic       int32          the topic's index in the model
  share       double         its share

A file is written atomically: a failed run leaves none. Standard output is
written as the documents are read. Streamed: memory is a batch per worker,
whatever the input's size.`

func runInfer(ctx context.Context, e *env, args []string) error {
	fs := newFlags("infer", "", inferAbout)
	o := e.addReadFlags(fs)
	addDocFlags(fs, o)
	addDenseFlags(fs, o, true)
	modelPath := fs.String("model", "model.json", "fitted model (lda, topic, gmm, hmm)")
	input := fs.String("input", "", "documents (any format of `streamfit inspect`), a directory of text files, or dense rows for gmm and hmm")
	out := fs.String("out", "theta.parquet", "output file: .parquet, .csv, .tsv, .jsonl or .ndjson by its extension; - for standard output")
	format := fs.String("out-format", "", "output format, whatever the name of --out: "+strings.Join(shareFormats, ", ")+" (default: by the extension; csv for -)")
	top := fs.Int("top", 0, "write each document's N largest shares, one row per (document, topic), largest first (0: every share, one row per document)")
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
	if *top < 0 {
		return usagef("--top %d: want a number of shares ≥ 1 (0: every share)", *top)
	}
	file := *out
	if file == "-" {
		file = ""
	}
	if err := checkOutputs([]string{*modelPath, *input, o.VocabPath}, file); err != nil {
		return err
	}
	outFormat, err := shareFormat(*out, *format)
	if err != nil {
		return err
	}
	inf, err := inferModel(*modelPath)
	if err != nil {
		return err
	}
	start := time.Now()
	pr, done := e.startProgress(*prog, "infer", fileSize(*input))
	defer done()
	o.Progress = pr
	src, run, err := inf.open(*input, *o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	t := inf.table(*top)
	if *idColumn != "" {
		if t.ids, err = openIDs(src.Info(), *input, *idColumn, o.DocColumn); err != nil {
			return err
		}
	}
	n, err := writeShares(ctx, src.Info().Path, run, o.Workers, t, *out, outFormat, e.stdout)
	if err != nil {
		return err
	}
	done()
	where := *out
	if where == "-" {
		where = "standard output"
	}
	e.printf("infer: %s shares of %d %ss under %d %ss in %.1fs → %s\n", t.unit, n, inf.itemWord(), t.k, t.unit, time.Since(start).Seconds(), where)
	return nil
}

// inferer is a model whose documents or sample rows have shares of its
// components: its kind implements models.Inferring (documents) or
// models.RowInferring (rows).
type inferer struct {
	name string
	m    models.Fitted
	docs models.Inferring    // nil for a model of rows
	rows models.RowInferring // nil for a model of documents
}

// inferModel reads the model file at path by its kind, whose documents or
// rows must have shares (models.Infers).
func inferModel(path string) (*inferer, error) {
	name, err := modelKind(path)
	if err != nil {
		return nil, err
	}
	k, err := models.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !models.Infers(k) {
		return nil, fmt.Errorf("%s: the %s model gives no shares to its documents or rows; infer reads %s models", path, name, strings.Join(models.Names(models.Infers), ", "))
	}
	m, err := k.Read(path)
	if err != nil {
		return nil, err
	}
	f := &inferer{name: name, m: m}
	if d, ok := k.(models.Inferring); ok {
		f.docs = d
	} else {
		f.rows = k.(models.RowInferring)
	}
	return f, nil
}

// inferRun runs a model's inference over its input, calling emit with the
// shares a batch at a time.
type inferRun func(ctx context.Context, workers int, emit func(first int64, n int, shares []float64) error) error

// open opens the input at path as the model reads it: documents or dense
// rows. Raw text without a vocabulary file is tokenized against the
// model's vocabulary.
func (f *inferer) open(path string, o stream.Options) (source, inferRun, error) {
	if f.rows != nil {
		src, err := stream.OpenDense(path, o)
		if err != nil {
			return nil, nil, err
		}
		return src, func(ctx context.Context, workers int, emit func(int64, int, []float64) error) error {
			return f.rows.InferRows(ctx, f.m, src, workers, emit)
		}, nil
	}
	src, err := openDocsWith(path, o, f.m)
	if err != nil {
		return nil, nil, err
	}
	return src, func(ctx context.Context, workers int, emit func(int64, int, []float64) error) error {
		return f.docs.Infer(ctx, f.m, src, workers, emit)
	}, nil
}

// source is an opened input: documents or rows.
type source interface{ Info() stream.Info }

// openDocsWith opens path as documents; raw text without o.VocabPath is
// tokenized against the vocabulary of the topic model m, when it has one.
func openDocsWith(path string, o stream.Options, m models.Fitted) (stream.DocSource, error) {
	src, err := stream.Open(path, o)
	if err == nil || o.VocabPath != "" || !errors.Is(err, stream.ErrNeedVocab) {
		return src, err
	}
	tm, ok := m.(*models.Model)
	if !ok || tm.Vocab == nil {
		return nil, fmt.Errorf("%w; the model file holds no vocabulary: pass --vocab", err)
	}
	ts, err := stream.OpenText(path, o)
	if err != nil {
		return nil, err
	}
	tok, err := text.NewTokenizer(o)
	if err != nil {
		stream.Close(ts)
		return nil, err
	}
	return closingDocs{text.NewBag(ts, tok, tm.Vocab, o.WithDefaults().Workers), ts}, nil
}

// closingDocs are documents that close the text they are made of.
type closingDocs struct {
	stream.DocSource
	text stream.TextSource
}

func (c closingDocs) Close() error { return stream.Close(c.text) }

// table is the layout of the model's shares, with top (--top).
func (f *inferer) table(top int) shareTable {
	t := shareTable{model: f.name, item: "doc", unit: "topic", top: top}
	if f.rows != nil {
		t.k, t.d = f.rows.Shape(f.m)
		t.item, t.unit = "row", "component"
	} else {
		t.k, t.d = f.docs.Shape(f.m)
	}
	return t
}

// itemWord names what has shares, for messages.
func (f *inferer) itemWord() string {
	if f.rows != nil {
		return "row"
	}
	return "document"
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
// to the file out, in the format its extension names, atomically, and
// returns the number of documents; with ids, each document's id too.
func inferTo(ctx context.Context, src stream.DocSource, k models.Inferring, m models.Fitted, workers int, out string, ids *idSource) (int64, error) {
	format, err := shareFormat(out, "")
	if err != nil {
		return 0, err
	}
	f := &inferer{name: k.(models.Kind).Name(), m: m, docs: k}
	t := f.table(0)
	t.ids = ids
	run := func(ctx context.Context, workers int, emit func(int64, int, []float64) error) error {
		return k.Infer(ctx, m, src, workers, emit)
	}
	return writeShares(ctx, src.Info().Path, run, workers, t, out, format, nil)
}

// writeShares writes the shares run gives as the table t to out ("-":
// stdout) in format, and returns the number of documents or rows; input
// names the input in errors about its ids.
func writeShares(ctx context.Context, input string, run inferRun, workers int, t shareTable, out, format string, stdout io.Writer) (int64, error) {
	if t.top > t.k {
		t.top = t.k
	}
	w, err := newShareWriter(out, format, t, stdout)
	if err != nil {
		return 0, err
	}
	var n int64
	var cur *idCursor
	if t.ids != nil {
		cur = newIDCursor(ctx, t.ids, input)
		defer cur.stop()
	}
	err = run(ctx, workers, func(first int64, docs int, shares []float64) error {
		v, err := cur.take(docs)
		if err != nil {
			return err
		}
		n += int64(docs)
		return w.add(first, docs, shares, v)
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
