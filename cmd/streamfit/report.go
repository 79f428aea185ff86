package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/streamfit/streamfit/models/report"
	"github.com/streamfit/streamfit/stream"
)

// reportAbout is the help of `streamfit report`.
const reportAbout = `Writes one HTML file (script, style and data inline; no network) showing the
model: for lda/topic models a map of the topics, each topic's most relevant
words with the λ slider of LDAvis, the weights, and the documents' dominant
topics with --theta, and with --sweep the curves of a sweep over k (held-out
perplexity and coherence against k, the recommended k marked); for gmm, ica, hmm, markov, hmm-snapshot and multiview
models heat maps and bars of their parameters; for every model how it was fitted.`

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags("report", "", reportAbout)
	modelPath := fs.String("model", "model.json", "fitted model file")
	out := fs.String("out", "report.html", "output HTML file (written atomically)")
	vocabPath := fs.String("vocab", "", "lda/topic: vocabulary file, one word per line, when the model does not carry one")
	theta := fs.String("theta", "", "lda/topic: document–topic `table` (Parquet or Arrow, as streamfit infer writes): an optional integer id column (doc or id) and k share columns or one list<float> column of k shares")
	thetaID := fs.String("theta-id", "", "the integer document id column of --theta, when not named doc or id")
	var evals fileList
	fs.Var(&evals, "eval", "evaluation `file`: the JSON that streamfit eval --json prints (e.g. with --heldout or --coherence); its numbers are listed, its arrays of k numbers shown per topic; repeat the flag for several")
	heldout := fs.String("heldout", "", "lda/topic: held-out documents `file` (any input format) scored by document-completion perplexity, as eval --heldout does")
	sweep := fs.String("sweep", "", "lda/topic: sweep `file`, the JSON that streamfit fit lda --k LIST --json prints: its held-out perplexity and coherence against k, the recommended k marked (--model defaults to the recommended k's model file)")
	workers := fs.Int("workers", 0, "goroutines reading --theta and --heldout (0: one per CPU)")
	if pos, err := e.parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *sweep != "" && !set(fs, "model") {
		m, err := sweepModel(*sweep)
		if err != nil {
			return err
		}
		*modelPath = m
	}
	if err := checkOutputs(append([]string{*modelPath, *vocabPath, *theta, *heldout, *sweep}, evals...), *out); err != nil {
		return err
	}
	o := report.Options{ThetaPath: *theta, ThetaID: *thetaID, EvalPaths: evals, HeldOut: *heldout, SweepPath: *sweep, Workers: *workers}
	if *vocabPath != "" {
		v, err := stream.ReadVocab(*vocabPath)
		if err != nil {
			return err
		}
		o.Vocab = v
	}
	d, err := report.Build(ctx, *modelPath, o)
	if errors.Is(err, report.ErrNotApplicable) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	if err := report.Write(*out, d); err != nil {
		return err
	}
	if st, err := os.Stat(*out); err == nil {
		e.printf("report: wrote %s (%d KB)\n", *out, (st.Size()+1023)/1024)
	}
	for _, n := range d.Notes {
		e.printf("report: note: %s\n", n)
	}
	return nil
}

// sweepModel is the model file the report of the sweep file path shows
// when --model is not given: that of the recommended k (of the largest k
// when the sweep was not scored).
func sweepModel(path string) (string, error) {
	sf, err := report.ReadSweep(path)
	if err != nil {
		return "", err
	}
	k := sf.Recommended
	if k == 0 {
		k = sf.Scores[len(sf.Scores)-1].K
	}
	m := sf.ModelFile(path, k)
	if m == "" {
		return "", usagef("%s lists no model files: give the model to show with --model", path)
	}
	return m, nil
}

// fileList is a flag that may be given several times, one file each.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value.
func (l *fileList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
