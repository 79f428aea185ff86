package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/coherence"
	"github.com/streamfit/streamfit/stream"
)

// modelFlags say how eval reads a model that another tool wrote.
type modelFlags struct {
	alpha float64
}

func (f *modelFlags) add(fs *flag.FlagSet) {
	fs.Float64Var(&f.alpha, "alpha", 0, "α of every topic of the model (default: the model's own; 1/k for a .npy matrix or a Parquet one without an alpha column)")
}

// load reads --model: model.json, a .npy k×d matrix or a Parquet topic matrix.
func (f *modelFlags) load(path string) (*models.Model, error) {
	return models.Load(path, models.LoadOptions{Alpha: f.alpha})
}

// coherenceFlags are eval's --coherence mode.
type coherenceFlags struct {
	train string
	top   int
}

func (f *coherenceFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.train, "coherence", "", "score the model's topics over this training corpus instead (bag of words in any format): UMass and NPMI coherence of each topic's top words, topic diversity")
	fs.IntVar(&f.top, "top", coherence.DefaultTop, "--coherence: top words per topic")
}

// coherenceReport is what eval --coherence --json prints.
type coherenceReport struct {
	Model  string `json:"model"`
	Corpus string `json:"corpus"`
	K      int    `json:"k"`
	*coherence.Result
	// Words holds the top words themselves when a vocabulary is known.
	Words [][]string `json:"words,omitempty"`
}

// newCoherenceReport is what eval --coherence --json prints for res, the
// scores of m over corpus (whose vocabulary, when known, names the words
// if m carries none), and each topic's top words named (#id without a
// vocabulary).
func newCoherenceReport(modelPath, corpus string, m *models.Model, corpusVocab []string, res *coherence.Result) (*coherenceReport, [][]string) {
	rep := &coherenceReport{Model: modelPath, Corpus: corpus, K: m.K, Result: res}
	vocab := m.Vocab
	if vocab == nil {
		vocab = corpusVocab
	}
	var names [][]string
	for _, ws := range res.TopWords {
		var words []string
		for _, w := range ws {
			if vocab != nil {
				words = append(words, vocab[w])
			} else {
				words = append(words, "#"+strconv.Itoa(w))
			}
		}
		names = append(names, words)
	}
	if vocab != nil {
		rep.Words = names
	}
	return rep, names
}

func (e *env) runCoherence(ctx context.Context, modelPath string, mf *modelFlags, cf *coherenceFlags, asJSON bool) error {
	if cf.top < 2 {
		return usagef("--top must be at least 2, got %d", cf.top)
	}
	m, err := mf.load(modelPath)
	if err != nil {
		return err
	}
	src, err := stream.Open(cf.train, stream.Options{})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	res, err := coherence.ScoreModel(ctx, src, m, coherence.Options{Top: cf.top})
	if err != nil {
		return err
	}
	rep, names := newCoherenceReport(modelPath, cf.train, m, src.Info().Vocab, res)
	if asJSON {
		return e.printEvalJSON(rep, modelPath)
	}
	fmt.Fprintf(e.stdout, "model:     %s (k=%d, d=%d)\ncorpus:    %s (%d documents)\n", modelPath, m.K, m.D, cf.train, res.Docs)
	fmt.Fprintf(e.stdout, "UMass:     %.4f (mean over topics and top-%d word pairs; higher is better)\n", res.UMass, res.Top)
	fmt.Fprintf(e.stdout, "NPMI:      %.4f (document co-occurrence; in [-1, 1], higher is better)\n", res.NPMI)
	fmt.Fprintf(e.stdout, "diversity: %.4f (distinct share of the %d top words)\n", res.Diversity, res.Top*m.K)
	for t, words := range names {
		fmt.Fprintf(e.stdout, "topic %-3d umass %7.3f  npmi %6.3f: %s\n", t, res.TopicUMass[t], res.TopicNPMI[t], strings.Join(words, " "))
	}
	return nil
}
