package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// generatorNames names the generators of the registered models.
func generatorNames() []string {
	var names []string
	for _, g := range models.Generators() {
		names = append(names, g.Name())
	}
	return names
}

// generator returns the generator args[0] names, or a usage error.
func generator(args []string) (models.Generator, error) {
	if len(args) > 0 {
		for _, g := range models.Generators() {
			if g.Name() == args[0] {
				return g, nil
			}
		}
	}
	return nil, usagef("usage: streamfit gen %s --out FILE --truth FILE [flags]", strings.Join(generatorNames(), "|"))
}

func runGen(ctx context.Context, e *env, args []string) error {
	g, err := generator(args)
	if err != nil {
		return err
	}
	fs := newFlags("gen "+g.Name(), "", g.About())
	draw := g.Flags(fs)
	out := fs.String("out", "", "output data file (.parquet, .arrow, .arrows; documents also docword*.txt[.gz|.zst])")
	truth := fs.String("truth", "", "output truth file (JSON)")
	rowGroup := fs.Int("row-group", 0, "rows (documents) per Parquet row group / Arrow record batch (default: by size, see stream.WriteOptions)")
	prog := addProgressFlag(fs)
	if pos, err := e.parse(fs, args[1:]); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *out == "" {
		return usagef("--out is required")
	}
	data, err := draw()
	if err != nil {
		return usageError{err.Error()}
	}
	// Find an unwritable output before the data are generated.
	if err := checkOutputFormat(*out, ""); err != nil {
		return err
	}
	if err := checkOutputs(nil, *out, *truth); err != nil {
		return err
	}
	p, done := e.startProgress(*prog, "gen", 0)
	wo := stream.WriteOptions{RowGroupRows: *rowGroup}
	switch src := data.(type) {
	case stream.DocSource:
		err = writeDocs(ctx, src, *out, wo, p)
	case stream.DenseSource:
		err = writeRows(ctx, src, *out, wo, p)
	default:
		err = fmt.Errorf("gen %s: data of type %T is neither documents nor dense rows", g.Name(), data)
	}
	done()
	if err != nil {
		return err
	}
	if *truth != "" {
		if err := data.WriteTruth(*truth); err != nil {
			os.Remove(*out) // the data without its truth is not what was asked for
			return err
		}
	}
	return nil
}

// writeDocs writes the documents of src to the file out (its format by its
// name), atomically.
func writeDocs(ctx context.Context, src stream.DocSource, out string, wo stream.WriteOptions, p *stream.Progress) error {
	info := src.Info()
	p.SetTotalRows(info.Rows)
	wo.Terms, wo.Progress = info.Terms, p
	w, err := stream.Create(out, wo)
	if err != nil {
		return err
	}
	_, err = copyDocs(ctx, src, w, p)
	return err
}

// writeRows writes the rows of src to the table out (Parquet or Arrow,
// by its name), atomically.
func writeRows(ctx context.Context, src stream.DenseSource, out string, wo stream.WriteOptions, p *stream.Progress) error {
	w, err := stream.CreateDense(out, wo)
	if err != nil {
		return err
	}
	for b, err := range src.Rows(ctx) {
		if err == nil {
			p.Add(int64(b.Rows), 0)
			err = w.Write(b)
		}
		if err != nil {
			w.Abort()
			return err
		}
		b.Release()
	}
	return w.Close()
}

// copyDocs writes every document of src to w, committing w only on
// success, and returns how many it wrote.
func copyDocs(ctx context.Context, src stream.DocSource, w stream.DocWriter, p *stream.Progress) (int64, error) {
	var n int64
	for b, err := range src.Docs(ctx) {
		if err != nil {
			w.Abort()
			return n, err
		}
		p.Add(int64(b.Len()), 0)
		n += int64(b.Len())
		if err := w.Write(b); err != nil {
			w.Abort()
			return n, err
		}
		b.Release()
	}
	closeErr := w.Close
	if c, ok := w.(interface{ CloseContext(context.Context) error }); ok {
		closeErr = func() error { return c.CloseContext(ctx) } // a long final copy stops on Ctrl-C
	}
	if err := closeErr(); err != nil {
		return n, fmt.Errorf("closing output: %w", err)
	}
	return n, nil
}
