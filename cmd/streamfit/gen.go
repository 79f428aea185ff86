package main

import (
	"context"
	"fmt"
	"os"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

func init() {
	register("gen", "generate data with known truth: gen lda|topic|gmm|snapshots|ica|hmm|multiview", runGen)
}

func runGen(ctx context.Context, args []string) error {
	if len(args) > 0 && oneOf(args[0], "gmm", "snapshots", "ica", "hmm", "multiview") == nil {
		return runGenDense(ctx, args[0], args[1:])
	}
	if len(args) == 0 || (args[0] != "lda" && args[0] != "topic") {
		return usagef("usage: streamfit gen lda|topic|gmm|snapshots|ica|hmm|multiview --out FILE --truth FILE [flags]")
	}
	model := args[0]
	fs := newFlags("gen "+model, "", "Draws a corpus from an LDA (or single-topic) model and writes it as Parquet, Arrow or UCI docword (by the name of --out), with the model in a JSON truth file.")
	cfg := synth.LDAConfig{Single: model == "topic"}
	fs.Int64Var(&cfg.Docs, "docs", 10000, "number of documents")
	fs.IntVar(&cfg.Vocab, "vocab", 2000, "vocabulary size d")
	fs.IntVar(&cfg.K, "k", 10, "number of topics")
	if model == "lda" {
		fs.Float64Var(&cfg.Alpha0, "alpha0", 1, "Dirichlet concentration α₀ = Σαᵢ")
	}
	fs.Float64Var(&cfg.DocLen, "doc-len", 200, "mean document length (Poisson, at least 3)")
	fs.Float64Var(&cfg.Beta, "beta", 0.1, "symmetric Dirichlet parameter of the topics")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.IntVar(&cfg.Workers, "workers", 0, "generating goroutines (default: one per CPU; the output does not depend on it)")
	out := fs.String("out", "", "output data file (.parquet, .arrow, .arrows, docword*.txt[.gz|.zst])")
	truth := fs.String("truth", "", "output truth file (JSON)")
	rowGroup := fs.Int("row-group", 0, "documents per Parquet row group / Arrow batch (default: by size, 64 MB of decoded data per row group, 4 MB per Arrow batch)")
	prog := addProgressFlag(fs)
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	c, err := synth.NewLDA(cfg)
	if err != nil {
		return usageError{err.Error()}
	}
	// Find an unwritable output before the corpus is generated.
	if err := checkOutputFormat(*out, ""); err != nil {
		return err
	}
	if err := checkOutputs(nil, *out, *truth); err != nil {
		return err
	}
	p, done := startProgress(*prog, "gen", 0)
	p.SetTotalRows(cfg.Docs)
	w, err := stream.Create(*out, stream.WriteOptions{Terms: cfg.Vocab, RowGroupRows: *rowGroup, Progress: p})
	if err != nil {
		done()
		return err
	}
	_, err = copyDocs(ctx, c, w, p)
	done()
	if err != nil {
		return err
	}
	if *truth != "" {
		if err := c.WriteTruth(*truth); err != nil {
			os.Remove(*out) // the data without its truth is not what was asked for
			return err
		}
	}
	return nil
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
