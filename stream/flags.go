package stream

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// BatchFlags registers on fs the flags of the batches a pass is cut in:
// --batch-rows and --batch-entries (Options.BatchRows, BatchEntries). The
// commands and pipelines that read data share them: statistics of shards
// merge into those of the whole file only when the shards were read with
// the same values.
func BatchFlags(fs *flag.FlagSet, o *Options) {
	fs.IntVar(&o.BatchRows, "batch-rows", 0, fmt.Sprintf("rows per batch (default %d, or more for short documents from Parquet and Arrow: see --batch-entries)", DefaultBatchRows))
	fs.IntVar(&o.BatchEntries, "batch-entries", 0, fmt.Sprintf("documents from Parquet row groups and Arrow record batches come in batches of about this many entries, from --batch-rows up to %d times it rows, sized by each row group's mean document; -1: off (default %d; off when --batch-rows is given)", MaxBatchGrowth, DefaultBatchEntries))
}

// DocFlags registers on fs the flags that say how to read documents into
// o: the columns of a bag-of-words table, Spark vectors, and raw text
// (TextFlags). The commands and pipelines that read documents share them.
func DocFlags(fs *flag.FlagSet, o *Options) {
	fs.StringVar(&o.VocabPath, "vocab", "", "vocabulary file, one word per line (required to tokenize raw text)")
	fs.StringVar(&o.TermsColumn, "terms-column", DefaultTermsColumn, "column of term-id lists (or list<struct<term,count>>)")
	fs.StringVar(&o.CountsColumn, "counts-column", DefaultCountsColumn, "column of count lists")
	fs.StringVar(&o.DocColumn, "doc-column", DefaultDocColumn, "document id column of a long (doc, term, count) table")
	fs.StringVar(&o.TermColumn, "term-column", DefaultTermColumn, "term id column of a long table")
	fs.StringVar(&o.CountColumn, "count-column", DefaultCountColumn, "count column of a long table")
	fs.StringVar(&o.VectorColumn, "vector-column", DefaultVectorColumn, "column of Spark ML vectors (struct<type,size,indices,values>, as CountVectorizer writes), used when there is no --terms-column")
	TextFlags(fs, o)
}

// TextFlags registers on fs the flags that say how to read and tokenize
// raw text into o.
func TextFlags(fs *flag.FlagSet, o *Options) {
	fs.StringVar(&o.TextColumn, "text-column", DefaultTextColumn, "raw text column")
	fs.Func("token-pattern", "raw text: regular expression for one token (default: 2+ letters or digits)", func(s string) error {
		// A pattern that does not compile is a usage error, found here
		// (stream/text compiles it the same way when it tokenizes).
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Errorf("token pattern: %w", err)
		}
		o.TokenPattern = s
		return nil
	})
	fs.BoolVar(&o.KeepCase, "keep-case", false, "raw text: do not lower-case")
	fs.StringVar(&o.StopWords, "stop-words", "english", "raw text: english, none, or a file with one stop word per line")
}

// DenseFlags registers on fs the flags that say how to read dense sample
// rows into o; grouped adds the column of their set or sequence ids.
func DenseFlags(fs *flag.FlagSet, o *Options, grouped bool) {
	fs.StringVar(&o.ValuesColumn, "values-column", "", "dense samples: fixed_size_list<float> or list<float> column (default: x, else all numeric columns)")
	fs.Func("columns", "dense samples: comma-separated numeric columns", func(s string) error {
		o.Columns = strings.Split(s, ",")
		return nil
	})
	if grouped {
		fs.StringVar(&o.GroupColumn, "group-column", "", "dense samples: integer set/sequence id column")
	}
}
