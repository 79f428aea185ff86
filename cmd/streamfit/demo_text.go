package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/coherence"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/report"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/text"
)

// demoHeldOutEvery holds out every 10th document of demo --text, as the
// real-text benchmark does.
const demoHeldOutEvery = 10

// demoMinDocs is demo --text's vocabulary floor: words in fewer training
// documents are dropped (with the default ceiling of half the documents,
// gensim's filter_extremes(no_below=5, no_above=0.5)).
const demoMinDocs = 5

// textDemo is one run of demo --text: where it reads and writes, and the
// files written so far.
type textDemo struct {
	e       *env
	path    string // the raw text
	dir     string
	o       stream.Options
	prog    progressMode
	written []string
}

// out names the file name in the run's directory, noting it as written.
func (d *textDemo) out(name string) string {
	f := filepath.Join(d.dir, name)
	d.written = append(d.written, f)
	return f
}

// demoText runs the real-text workflow on the raw text at path (a directory
// of files, one document per line, or a Parquet/Arrow text column): every
// 10th document held out, a vocabulary from the rest, both parts written as
// bag of words, the default LDA fit, held-out perplexity, coherence and
// diversity, and the topics.
// The files stay in dir when kept (demo --dir), else they go with it.
func (e *env) demoText(ctx context.Context, path, dir string, kept bool, k int, seed uint64, o stream.Options, prog progressMode) (err error) {
	d := &textDemo{e: e, path: path, dir: dir, o: o, prog: prog}
	// Every file is written atomically; on failure the ones already written
	// go too, so that DIR holds a whole run or none of it.
	defer func() {
		if err != nil {
			for _, f := range d.written {
				os.Remove(f)
			}
		}
	}()
	parts, err := d.split(ctx)
	if err != nil {
		return err
	}
	m, modelPath, err := d.fit(ctx, parts[0], k, seed)
	if err != nil {
		return err
	}
	if err := d.score(ctx, m, modelPath, parts); err != nil {
		return err
	}
	if kept {
		fmt.Fprintf(e.stdout, "the held-out documents' topic shares → theta.parquet; both scores → heldout.json, coherence.json; the model's page → report.html\n\n")
	} else {
		fmt.Fprintf(e.stdout, "(--dir DIR keeps the files: vocabulary, both parts as Parquet, the model, the held-out documents' topic shares, both scores and the model's page)\n\n")
	}
	e.printTopics(m, m.Vocab, 10, 1)
	return nil
}

// split builds the vocabulary of the training documents and writes both
// parts as bag of words, returning their paths.
func (d *textDemo) split(ctx context.Context) ([2]string, error) {
	var paths [2]string
	t0 := time.Now()
	o := d.o
	// Three passes over the text: the vocabulary, then each part.
	p, done := d.e.startProgress(d.prog, "demo", 0)
	defer done()
	o.Progress = p
	src, err := stream.OpenText(d.path, o)
	if err != nil {
		return paths, err
	}
	defer stream.Close(src)
	p.SetTotal(3 * max(src.Info().Bytes, fileSize(d.path)))
	p.SetStage("vocabulary")
	train, test := text.HeldOut(src, demoHeldOutEvery)
	v, err := text.Build(ctx, train, o, text.BuildOptions{MinDocs: demoMinDocs})
	if err != nil {
		return paths, err
	}
	if len(v.Words) == 0 {
		return paths, fmt.Errorf("%s: no word is in %d or more training documents and at most half of them; a larger corpus is needed", d.path, demoMinDocs)
	}
	if err := v.Write(d.out("vocab.txt")); err != nil {
		return paths, err
	}
	tok, err := text.NewTokenizer(o)
	if err != nil {
		return paths, usageError{err.Error()}
	}
	workers := o.WithDefaults().Workers
	paths = [2]string{d.out("train.parquet"), d.out("test.parquet")}
	var docs [2]int64
	for i, part := range []stream.TextSource{train, test} {
		w, err := stream.Create(paths[i], stream.WriteOptions{Terms: len(v.Words), Vocab: v.Words})
		if err != nil {
			return paths, err
		}
		p.SetStage(filepath.Base(paths[i]))
		bag := text.NewBag(part, tok, v.Words, workers)
		if docs[i], err = copyDocs(ctx, bag, w, nil); err != nil {
			return paths, fmt.Errorf("%s: %w", d.path, err)
		}
	}
	done()
	fmt.Fprintf(d.e.stdout, "read %d documents from %s: %d to fit, every %dth (%d) held out; %d words in %d or more of the documents fitted and in at most half of them (stop words: %s) in %.1fs → %s\n",
		docs[0]+docs[1], d.path, docs[0], demoHeldOutEvery, docs[1], len(v.Words), demoMinDocs, o.StopWords, time.Since(t0).Seconds(), d.dir)
	if docs[1] == 0 {
		return paths, fmt.Errorf("%s: %d documents leave none to hold out; at least %d are needed", d.path, docs[0], demoHeldOutEvery)
	}
	return paths, nil
}

// fit fits LDA as fit lda does by default to the training documents at
// train, and writes the model.
func (d *textDemo) fit(ctx context.Context, train string, k int, seed uint64) (*models.Model, string, error) {
	t1 := time.Now()
	pf, doneFit := d.e.startProgress(d.prog, "demo fit lda", 0)
	defer doneFit()
	in, err := stream.Open(train, stream.Options{Progress: pf})
	if err != nil {
		return nil, "", err
	}
	defer stream.Close(in)
	var limit planLimit
	cfg := lda.DefaultConfig(k) // fit lda's defaults
	cfg.Seed, cfg.Progress, cfg.OnPlan = seed, d.e.ldaProgress(pf, "lda", in.Info().Rows), limit.onPlan
	m, err := lda.Fit(ctx, in, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", d.path, err)
	}
	doneFit()
	for _, w := range m.Fit.Warnings {
		d.e.warn("demo", w)
	}
	modelPath := d.out("model.json")
	if err := m.Write(modelPath); err != nil {
		return nil, "", err
	}
	fmt.Fprintf(d.e.stdout, "fitted LDA with k=%d in %.1fs: spectral start, then %d EM passes (%d passes over the documents in all)\n",
		k, time.Since(t1).Seconds(), m.Fit.EM.Passes, m.Fit.Passes)
	return m, modelPath, nil
}

// score prints the held-out perplexity and the coherence of m, writes the
// held-out documents' topic shares, both scores and the model's page.
func (d *textDemo) score(ctx context.Context, m *models.Model, modelPath string, paths [2]string) error {
	in, err := stream.Open(paths[0], stream.Options{})
	if err != nil {
		return err
	}
	defer stream.Close(in)
	ts, err := stream.Open(paths[1], stream.Options{})
	if err != nil {
		return err
	}
	defer stream.Close(ts)
	h, err := lda.Perplexity(ctx, ts, m.Topics, m.Alpha, lda.ScoreOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", paths[1], err)
	}
	c, err := coherence.ScoreModel(ctx, in, m, coherence.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.e.stdout, "held-out perplexity %.1f (document completion on %d documents); over the fitted documents, top %d words: UMass %.3f, NPMI %.3f, diversity %.2f\n",
		h.Perplexity, h.Docs, c.Top, c.UMass, c.NPMI, c.Diversity)
	// Document topics of the held-out documents, and the page to look at.
	thetaPath := d.out("theta.parquet")
	if _, err := inferTo(ctx, ts, lda.Kind, m, d.o.Workers, thetaPath, nil); err != nil {
		return fmt.Errorf("%s: %w", paths[1], err)
	}
	// The two evaluations as eval --json writes them, which the page lists.
	evals := []string{d.out("heldout.json"), d.out("coherence.json")}
	rep, _ := newCoherenceReport(modelPath, paths[0], m, nil, c)
	for i, v := range []any{h, rep} {
		if err := models.WriteJSON(evals[i], v); err != nil {
			return err
		}
	}
	page, err := report.Build(ctx, modelPath, report.Options{ThetaPath: thetaPath, EvalPaths: evals, Workers: d.o.Workers})
	if err != nil {
		return err
	}
	return report.Write(d.out("report.html"), page)
}
