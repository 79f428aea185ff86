package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/text"
)

// addBuildFlags registers the vocabulary-building flags (vocab build, convert).
func addBuildFlags(fs *flag.FlagSet) *text.BuildOptions {
	b := &text.BuildOptions{}
	fs.Int64Var(&b.MinCount, "min-count", text.DefaultMinCount, "vocabulary: drop words seen fewer times in the whole corpus")
	fs.Int64Var(&b.MinDocs, "min-df", 0, "vocabulary: drop words found in fewer documents than this")
	fs.Float64Var(&b.MaxDocFreq, "max-df", text.DefaultMaxDocFreq, "vocabulary: drop words in more than this fraction of documents")
	fs.IntVar(&b.MaxSize, "max-size", 0, "vocabulary: keep at most this many most frequent words (0: no limit)")
	return b
}

// vocabBuildAbout is the help of `streamfit vocab build`.
const vocabBuildAbout = `Reads raw text once (a Parquet/Arrow text column, a directory of text files, or a
file with one document per line) and writes the vocabulary: words ordered by
decreasing count, one per line (term id = line number - 1). Later runs pass it
with --vocab and the same tokenization flags.`

func runVocab(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "build" && args[0] != "show") {
		return usagef("usage: streamfit vocab build --out VOCAB INPUT | streamfit vocab show VOCAB")
	}
	if args[0] == "show" {
		fs := newFlags("vocab show", "VOCAB", "Prints the size and the first words of a vocabulary file.")
		top := fs.Int("top", 20, "number of words to print")
		pos, err := e.parse(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("want one VOCAB file")
		}
		words, err := stream.ReadVocab(pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: %d words\n", pos[0], len(words))
		for i, w := range words[:min(*top, len(words))] {
			fmt.Fprintf(e.stdout, "%6d  %s\n", i, w)
		}
		return nil
	}
	fs := newFlags("vocab build", "INPUT", vocabBuildAbout)
	o := e.addReadFlags(fs)
	addTextFlags(fs, o)
	bo := addBuildFlags(fs)
	out := fs.String("out", "", "output vocabulary file")
	prog := addProgressFlag(fs)
	pos, err := e.parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		return usagef("want one INPUT and --out")
	}
	p, done := e.startProgress(*prog, "vocab", fileSize(pos[0]))
	defer done()
	v, err := buildVocab(ctx, pos[0], *o, *bo, *out, p)
	if err != nil {
		return err
	}
	done()
	fmt.Fprintf(e.stdout, "%s: %d words\n", *out, len(v.Words))
	return nil
}

// buildVocab makes a vocabulary from the raw text at path and writes it to out.
func buildVocab(ctx context.Context, path string, o stream.Options, b text.BuildOptions, out string, p *stream.Progress) (*text.Vocabulary, error) {
	if err := checkOutputs([]string{path, o.StopWords}, out); err != nil {
		return nil, err
	}
	o.Progress = p
	v, err := buildVocabWords(ctx, path, o, b)
	if err != nil {
		return nil, err
	}
	return v, v.Write(out)
}

// buildVocabWords makes a vocabulary from the raw text at path, in memory.
func buildVocabWords(ctx context.Context, path string, o stream.Options, b text.BuildOptions) (*text.Vocabulary, error) {
	src, err := stream.OpenText(path, o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	v, err := text.Build(ctx, src, o, b)
	if err != nil {
		return nil, err
	}
	if len(v.Words) == 0 {
		return nil, fmt.Errorf("%s: no word passes the vocabulary filters (lower --min-count or raise --max-df)", path)
	}
	return v, nil
}
