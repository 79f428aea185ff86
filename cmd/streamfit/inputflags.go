package main

import (
	"flag"
	"os"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// addInputFlags registers every flag that says how to read an input file, for
// the commands that read documents and dense samples alike (convert, inspect).
func addInputFlags(fs *flag.FlagSet) *stream.Options {
	o := addReadFlags(fs)
	addDocFlags(fs, o)
	addDenseFlags(fs, o, true)
	return o
}

// addReadFlags registers the flags of every command that reads data: the
// format and how the reading is split.
func addReadFlags(fs *flag.FlagSet) *stream.Options {
	o := &stream.Options{}
	fs.Func("format", "input format (default: detect); one of "+strings.Join(stream.Formats(), ", "), func(s string) error {
		o.Format = s
		return oneOf(s, stream.Formats()...)
	})
	fs.IntVar(&o.BatchRows, "batch-rows", stream.DefaultBatchRows, "rows per batch")
	fs.IntVar(&o.Workers, "workers", 0, "decoding and accumulation goroutines (default: one per CPU)")
	return o
}

// addDocFlags registers the flags that say how to read documents: the
// columns of a bag-of-words table, and raw text.
func addDocFlags(fs *flag.FlagSet, o *stream.Options) {
	fs.StringVar(&o.VocabPath, "vocab", "", "vocabulary file, one word per line (required to tokenize raw text)")
	fs.StringVar(&o.TermsColumn, "terms-column", stream.DefaultTermsColumn, "column of term-id lists (or list<struct<term,count>>)")
	fs.StringVar(&o.CountsColumn, "counts-column", stream.DefaultCountsColumn, "column of count lists")
	fs.StringVar(&o.DocColumn, "doc-column", stream.DefaultDocColumn, "document id column of a long (doc, term, count) table")
	fs.StringVar(&o.TermColumn, "term-column", stream.DefaultTermColumn, "term id column of a long table")
	fs.StringVar(&o.CountColumn, "count-column", stream.DefaultCountColumn, "count column of a long table")
	fs.StringVar(&o.VectorColumn, "vector-column", stream.DefaultVectorColumn, "column of Spark ML vectors (struct<type,size,indices,values>, as CountVectorizer writes), used when there is no --terms-column")
	addTextFlags(fs, o)
}

// addTextFlags registers the flags that say how to read and tokenize raw text.
func addTextFlags(fs *flag.FlagSet, o *stream.Options) {
	fs.StringVar(&o.TextColumn, "text-column", stream.DefaultTextColumn, "raw text column")
	fs.StringVar(&o.TokenPattern, "token-pattern", "", "raw text: regular expression for one token (default: 2+ letters or digits)")
	fs.BoolVar(&o.KeepCase, "keep-case", false, "raw text: do not lower-case")
	fs.StringVar(&o.StopWords, "stop-words", "english", "raw text: english, none, or a file with one stop word per line")
}

// addDenseFlags registers the flags that say how to read dense samples; grouped
// adds the set/sequence id column.
func addDenseFlags(fs *flag.FlagSet, o *stream.Options, grouped bool) {
	fs.StringVar(&o.ValuesColumn, "values-column", "", "dense samples: fixed_size_list<float> or list<float> column (default: x, else all numeric columns)")
	fs.Func("columns", "dense samples: comma-separated numeric columns", func(s string) error {
		o.Columns = strings.Split(s, ",")
		return nil
	})
	if grouped {
		fs.StringVar(&o.GroupColumn, "group-column", "", "dense samples: integer set/sequence id column")
	}
}

// spillFlags say whether a command that reads --input several times keeps
// a binary copy of the documents for the passes after the first, and where.
type spillFlags struct{ mode, dir string }

// addSpillFlags registers --spill and --spill-dir.
func addSpillFlags(fs *flag.FlagSet) *spillFlags {
	sp := &spillFlags{mode: "auto"}
	fs.Func("spill", "off, on or auto (default): the first complete pass writes a compact binary copy of the documents to a temporary file that the later passes read instead of re-parsing --input; auto does so for docword (.gz/.zst/plain) and raw text (lines, a directory of files, a text column), which are slow to decode, not for Parquet/Arrow bag-of-words. The file is about the size of the gzipped docword and is removed when the command ends", func(s string) error {
		sp.mode = s
		return oneOf(s, "off", "on", "auto")
	})
	fs.StringVar(&sp.dir, "spill-dir", "", "directory of the --spill file (default: the system temporary directory)")
	return sp
}

// openDocs opens path as a document source for several passes: when the
// spill sp is on (or auto and the format is slow to decode), the passes after
// the first complete one read a spill file. Closing the source removes it.
// A spill that cannot be written is a warning, not an error.
func (e *env) openDocs(sp *spillFlags, cmd, path string, o stream.Options) (stream.DocSource, error) {
	src, err := stream.Open(path, o)
	if err != nil || sp == nil || sp.mode == "off" || (sp.mode == "auto" && !stream.DecodeHeavy(src.Info())) {
		return src, err
	}
	spilled := stream.Spill(src, stream.SpillOptions{
		Dir: sp.dir, Workers: o.Workers, Progress: o.Progress,
		Warn: func(err error) { e.warn(cmd, err.Error()) },
	})
	if o.Progress != nil {
		dir := sp.dir
		if dir == "" {
			dir = os.TempDir()
		}
		e.printf("streamfit %s: the passes after the first read a copy of the documents spilled to %s\n", cmd, dir)
	}
	return spilled, nil
}
