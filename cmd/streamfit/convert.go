package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
	"github.com/streamfit/streamfit/stream/text"
)

// convertAbout is the help of `streamfit convert`.
const convertAbout = `Copies IN to OUT in the format named by OUT's extension: .parquet (zstd), .arrow
(IPC file), .arrows (IPC stream), docword*.txt[.gz|.zst] (UCI bag of words; the
vocabulary, when known, goes to vocab.*.txt beside it). A docword input reads
the vocab.*.txt beside it unless --vocab names one.
Raw text (a text column, a directory of files, one document per line) becomes bag
of words: against --vocab if given, else a vocabulary is built first (one more
pass, same options as ` + "`streamfit vocab build`" + `) and written to OUT.vocab.
Nothing is written unless the whole conversion succeeds.
Dense sample tables convert between Parquet and Arrow with --dense.`

func runConvert(ctx context.Context, e *env, args []string) error {
	fs := newFlags("convert", "IN OUT", convertAbout)
	o := e.addInputFlags(fs)
	dense := fs.Bool("dense", false, "convert dense samples instead of documents")
	layout := fs.String("layout", "lists", "document layout of columnar output: lists, pairs or long")
	compression := fs.String("compression", "", "compression of columnar output: Parquet zstd (default), snappy, gzip, lz4, brotli or none; Arrow none (default), zstd or lz4. Docword output is compressed by its name (.gz, .zst)")
	rowGroup := fs.Int("row-group", 0, "rows per Parquet row group / Arrow batch (default: by size, 64 MB of decoded data per row group, 4 MB per Arrow batch)")
	bo := addBuildFlags(fs)
	prog := addProgressFlag(fs)
	pos, err := e.parse(fs, args)
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
	// The output's format and place are checked before any pass.
	if err := checkOutputFormat(out, *compression); err != nil {
		return err
	}
	vocabOut := ""
	if o.VocabPath == "" {
		vocabOut = out + ".vocab" // raw text without a vocabulary builds one
	}
	if err := checkOutputs([]string{in, o.VocabPath}, out, vocabOut); err != nil {
		return err
	}
	p, done := e.startProgress(*prog, "convert", fileSize(in))
	defer done()
	o.Progress = p
	if *dense {
		return convertDense(ctx, in, out, *o, wo)
	}
	return convertDocs(ctx, in, out, *o, wo, *bo)
}

// convertDense copies the dense rows of in to the table out.
func convertDense(ctx context.Context, in, out string, o stream.Options, wo stream.WriteOptions) error {
	src, err := stream.OpenDense(in, o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	return writeRows(ctx, src, out, wo, nil)
}

// convertDocs copies the documents of in to out; raw text without a
// vocabulary becomes bag of words against one built first, written to
// OUT.vocab with OUT.
func convertDocs(ctx context.Context, in, out string, o stream.Options, wo stream.WriteOptions, bo text.BuildOptions) error {
	src, err := stream.Open(in, o)
	var vocab *stream.AtomicFile // OUT.vocab, committed with OUT
	if errors.Is(err, stream.ErrNeedVocab) {
		src, vocab, err = textToBag(ctx, in, out+".vocab", o, bo)
	}
	if err != nil {
		return err
	}
	defer stream.Close(src)
	if vocab != nil {
		defer vocab.Abort() // a no-op once committed
	}
	info := src.Info()
	wo.Terms, wo.Vocab = info.Terms, info.Vocab
	if wo.Terms == 0 {
		return fmt.Errorf("%s: vocabulary size unknown; pass --vocab", in)
	}
	w, err := stream.Create(out, wo)
	if err != nil {
		return err
	}
	if _, err := copyDocs(ctx, src, w, nil); err != nil {
		return err
	}
	if vocab != nil {
		return vocab.Commit()
	}
	return nil
}

// checkOutputFormat refuses, as usage errors, an output name whose format is
// unknown and a compression its format does not take.
func checkOutputFormat(out, compression string) error {
	f, err := stream.DetectName(out, "")
	if err != nil {
		return usageError{err.Error()}
	}
	switch f.Name {
	case columnar.FormatParquet, columnar.FormatArrow, columnar.FormatArrowStream:
		if err := columnar.CheckCompression(f.Name, compression); err != nil {
			return usagef("--compression: %v", err)
		}
	default:
		if compression != "" {
			return usagef("--compression is for Parquet and Arrow output; %s output is compressed by its name (.gz, .zst)", f.Name)
		}
	}
	return nil
}

// textToBag builds a vocabulary from raw text in memory and returns the text
// as bag of words against it, with the vocabulary written to a temporary
// file that the caller commits to vpath once the output is complete.
func textToBag(ctx context.Context, in, vpath string, o stream.Options, b text.BuildOptions) (stream.DocSource, *stream.AtomicFile, error) {
	v, err := buildVocabWords(ctx, in, o, b)
	if err != nil {
		return nil, nil, err
	}
	vf, err := stream.CreateAtomic(vpath)
	if err != nil {
		return nil, nil, err
	}
	if _, err := v.WriteTo(vf); err != nil {
		vf.Abort()
		return nil, nil, err
	}
	tok, err := text.NewTokenizer(o)
	if err != nil {
		vf.Abort()
		return nil, nil, usageError{err.Error()}
	}
	ts, err := stream.OpenText(in, o)
	if err != nil {
		vf.Abort()
		return nil, nil, err
	}
	return text.NewBag(ts, tok, v.Words, o.WithDefaults().Workers), vf, nil
}
