package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// demoAbout is the help of `streamfit demo`.
const demoAbout = `The whole job on an embedded default: draws an LDA corpus whose topics are
themes of a built-in word list (sports, food, music, weather, space, computing,
health, finance, ocean, garden), writes it as Parquet with its vocabulary, fits
spectral LDA from the file (generated data follow the model, so the likelihood
refinement that fit lda adds is left out), compares the fitted topics with the truth, and
prints each topic's most probable words. The fit is the same as:

  streamfit fit lda --input DIR/corpus.parquet --k 10 --alpha0 1 --em-passes 0 --out DIR/model.json
  streamfit eval --model DIR/model.json --truth DIR/truth.json

With --text PATH, the whole job on real text instead (a directory of text files,
one document per line, or a Parquet/Arrow text column): every 10th document is
held out, a vocabulary is built from the others (English stop words out, words in
fewer than 5 of them or in more than half dropped), both parts are written as
Parquet, LDA is fitted as fit lda does by default (spectral start, then EM
passes), and the held-out perplexity, the topics' coherence and diversity and
their most probable words are printed. On any machine with Go:

  streamfit demo --text "$(go env GOROOT)/src" --k 20

The steps by hand are vocab build, convert, fit lda, eval --heldout, eval
--coherence and topics (README, "Real text, step by step").`

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags("demo", "", demoAbout)
	cfg := synth.LDAConfig{Themes: synth.Themes}
	fs.Int64Var(&cfg.Docs, "docs", 20000, "documents")
	fs.IntVar(&cfg.K, "k", len(synth.Themes), fmt.Sprintf("topics: the first k themes (at most %d); with --text, any number the data support", len(synth.Themes)))
	fs.Float64Var(&cfg.DocLen, "doc-len", 200, "mean document length")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	dir := fs.String("dir", "", "keep the corpus, truth and model (with --text: every file written) in this directory (default: a temporary one, removed)")
	textPath := fs.String("text", "", "fit this raw text instead (a directory of files, one document per line, or a text column), holding out every 10th document")
	o := &stream.Options{}
	addTextFlags(fs, o)
	prog := addProgressFlag(fs)
	if pos, err := e.parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	for _, name := range []string{"docs", "doc-len"} {
		if *textPath != "" && set(fs, name) {
			return usagef("--%s sizes the generated corpus, not --text", name)
		}
	}
	for _, name := range []string{"text-column", "token-pattern", "keep-case", "stop-words", "progress"} {
		if *textPath == "" && set(fs, name) {
			return usagef("--%s applies to --text only", name)
		}
	}
	if *textPath != "" && cfg.K < 1 {
		return usagef("--k must be at least 1, got %d", cfg.K)
	}
	kept := *dir != ""
	if !kept {
		tmp, err := os.MkdirTemp("", "streamfit-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	if *textPath != "" {
		return e.demoText(ctx, *textPath, *dir, kept, cfg.K, cfg.Seed, *o, *prog)
	}
	return e.demoSynth(ctx, cfg, *dir)
}

// demoSynth generates the corpus of cfg into dir with its truth, fits it
// and prints the fit's score against the truth and its topics.
func (e *env) demoSynth(ctx context.Context, cfg synth.LDAConfig, dir string) error {
	corpus := filepath.Join(dir, "corpus.parquet")
	t0 := time.Now()
	c, err := synth.NewLDA(cfg)
	if err != nil {
		return err
	}
	info := c.Info()
	w, err := stream.Create(corpus, stream.WriteOptions{Terms: info.Terms, Vocab: info.Vocab})
	if err != nil {
		return err
	}
	if _, err := copyDocs(ctx, c, w, nil); err != nil {
		return err
	}
	if err := c.WriteTruth(filepath.Join(dir, "truth.json")); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "generated %d documents (%d topics over a vocabulary of %d words) in %.1fs → %s\n", cfg.Docs, c.Truth.K, info.Terms, time.Since(t0).Seconds(), corpus)

	t1 := time.Now()
	src, err := stream.Open(corpus, stream.Options{})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	m, err := lda.Fit(ctx, src, lda.Config{K: cfg.K, Alpha0: 1, Seed: cfg.Seed})
	if err != nil {
		return err
	}
	if err := m.Write(filepath.Join(dir, "model.json")); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "fitted spectral LDA in %.1fs: %d passes over %d documents (%d skipped), %s whitening\n",
		time.Since(t1).Seconds(), m.Fit.Passes, m.Fit.Docs, m.Fit.Skipped, m.Fit.Whitening)

	t := c.Truth
	ev, err := models.Evaluate(m, &models.Model{Model: t.Model, K: t.K, D: t.D, Alpha0: t.Alpha0, Alpha: t.Alpha, Topics: t.Topics})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "against the truth: mean ℓ1 %.4f, max ℓ1 %.4f, %d/%d topics found, α error %.4f\n\n", ev.MeanL1, ev.MaxL1, ev.Found, ev.TruthK, ev.AlphaRelErr)
	e.printTopics(m, m.Vocab, 8, 1)
	return nil
}
