package main

import (
	"flag"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// addInputFlags registers the flags that say how to read an input file.
func addInputFlags(fs *flag.FlagSet) *stream.Options {
	o := &stream.Options{}
	fs.StringVar(&o.Format, "format", "", "input format (default: detect); one of "+strings.Join(stream.Formats(), ", "))
	fs.StringVar(&o.VocabPath, "vocab", "", "vocabulary file, one word per line (required to tokenize raw text)")
	fs.StringVar(&o.TermsColumn, "terms-column", stream.DefaultTermsColumn, "column of term-id lists (or list<struct<term,count>>)")
	fs.StringVar(&o.CountsColumn, "counts-column", stream.DefaultCountsColumn, "column of count lists")
	fs.StringVar(&o.DocColumn, "doc-column", stream.DefaultDocColumn, "document id column of a long (doc, term, count) table")
	fs.StringVar(&o.TermColumn, "term-column", stream.DefaultTermColumn, "term id column of a long table")
	fs.StringVar(&o.CountColumn, "count-column", stream.DefaultCountColumn, "count column of a long table")
	fs.StringVar(&o.TextColumn, "text-column", stream.DefaultTextColumn, "raw text column")
	fs.StringVar(&o.ValuesColumn, "values-column", "", "dense samples: fixed_size_list<float> or list<float> column (default: x, else all numeric columns)")
	fs.Func("columns", "dense samples: comma-separated numeric columns", func(s string) error {
		o.Columns = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&o.GroupColumn, "group-column", "", "dense samples: integer set/sequence id column")
	fs.IntVar(&o.BatchRows, "batch-rows", stream.DefaultBatchRows, "rows per batch")
	fs.IntVar(&o.Workers, "workers", 0, "decoding and accumulation goroutines (default: one per CPU)")
	fs.StringVar(&o.TokenPattern, "token-pattern", "", "raw text: regular expression for one token (default: 2+ letters or digits)")
	fs.BoolVar(&o.KeepCase, "keep-case", false, "raw text: do not lower-case")
	fs.StringVar(&o.StopWords, "stop-words", "english", "raw text: english, none, or a file with one stop word per line")
	return o
}
