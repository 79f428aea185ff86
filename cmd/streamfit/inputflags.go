package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// addInputFlags registers every flag that says how to read an input file, for
// the commands that read documents and dense samples alike (convert, inspect).
func (e *env) addInputFlags(fs *flag.FlagSet) *stream.Options {
	o := e.addReadFlags(fs)
	addDocFlags(fs, o)
	addDenseFlags(fs, o, true)
	return o
}

// addReadFlags registers the flags of every command that reads data: the
// format and how the reading is split.
func (e *env) addReadFlags(fs *flag.FlagSet) *stream.Options {
	// What a source passes over (binary files in a text directory) is a
	// warning on stderr.
	o := &stream.Options{Warn: stream.NewWarner(func(msg string) { e.warn(fs.Name(), msg) })}
	fs.Func("format", "input format (default: detect); one of "+strings.Join(stream.Formats(), ", "), func(s string) error {
		o.Format = s
		return oneOf(s, stream.Formats()...)
	})
	stream.BatchFlags(fs, o)
	fs.IntVar(&o.Workers, "workers", 0, "decoding and accumulation goroutines (default: one per CPU)")
	return o
}

// addDocFlags registers the flags that say how to read documents: the
// columns of a bag-of-words table, and raw text.
func addDocFlags(fs *flag.FlagSet, o *stream.Options) { stream.DocFlags(fs, o) }

// addTextFlags registers the flags that say how to read and tokenize raw text.
func addTextFlags(fs *flag.FlagSet, o *stream.Options) { stream.TextFlags(fs, o) }

// addDenseFlags registers the flags that say how to read dense samples; grouped
// adds the set/sequence id column.
func addDenseFlags(fs *flag.FlagSet, o *stream.Options, grouped bool) {
	stream.DenseFlags(fs, o, grouped)
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
// A spill that cannot be written is a warning, not an error. A source that
// does not know its vocabulary's size is refused here, naming the file.
func (e *env) openDocs(sp *spillFlags, cmd, path string, o stream.Options) (stream.DocSource, error) {
	src, err := stream.Open(path, o)
	if err == nil && src.Info().Terms == 0 {
		// A topic fit sizes everything by the vocabulary.
		stream.Close(src)
		return nil, fmt.Errorf("%s: the file does not say how many words its vocabulary has (no vocabulary in its metadata or beside it, no term-id statistics): give the vocabulary file with --vocab", path)
	}
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
