package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("convert", "convert between docword, Parquet and Arrow IPC; raw text to bag of words", runConvert)
}

func runConvert(ctx context.Context, args []string) error {
	fs := newFlags("convert", "IN OUT", `Copies IN to OUT in the format named by OUT's extension: .parquet (zstd), .arrow
(IPC file), .arrows (IPC stream), docword*.txt[.gz|.zst] (UCI bag of words).
Raw text (a text column, a directory of files, one document per line) becomes bag
of words: against --vocab if given, else a vocabulary is built first (one more
pass, same options as `+"`streamfit vocab build`"+`) and written to OUT.vocab.
Dense sample tables convert between Parquet and Arrow with --dense.`)
	o := addInputFlags(fs)
	dense := fs.Bool("dense", false, "convert dense samples instead of documents")
	layout := fs.String("layout", "lists", "document layout of columnar output: lists, pairs or long")
	compression := fs.String("compression", "zstd", "compression of Parquet/Arrow output: zstd, snappy, none")
	rowGroup := fs.Int("row-group", 0, "rows per Parquet row group / Arrow batch (default 16384)")
	bo := addBuildFlags(fs)
	prog := addProgressFlag(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want IN and OUT, got %d arguments", len(pos))
	}
	in, out := pos[0], pos[1]
	if err := oneOf(*layout, "lists", "pairs", "long"); err != nil {
		return err
	}
	wo := stream.WriteOptions{Layout: *layout, Compression: *compression, RowGroupRows: *rowGroup}
	p, done := startProgress(*prog, "convert", fileSize(in))
	defer done()
	o.Progress = p
	if *dense {
		src, err := stream.OpenDense(in, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		w, err := stream.CreateDense(out, wo)
		if err != nil {
			return err
		}
		for b, err := range src.Rows(ctx) {
			if err != nil {
				w.Abort()
				return err
			}
			if err := w.Write(b); err != nil {
				w.Abort()
				return err
			}
			b.Release()
		}
		return w.Close()
	}
	src, err := stream.Open(in, *o)
	if errors.Is(err, stream.ErrNeedVocab) {
		// Raw text without a vocabulary: build one first.
		vpath := out + ".vocab"
		if _, err := buildVocab(ctx, in, *o, *bo, vpath, p); err != nil {
			return err
		}
		o.VocabPath = vpath
		src, err = stream.Open(in, *o)
	}
	if err != nil {
		return err
	}
	defer stream.Close(src)
	info := src.Info()
	wo.Terms, wo.Vocab = info.Terms, info.Vocab
	if wo.Terms == 0 {
		return fmt.Errorf("%s: vocabulary size unknown; pass --vocab", in)
	}
	w, err := stream.Create(out, wo)
	if err != nil {
		return err
	}
	return copyDocs(ctx, src, w, nil)
}
