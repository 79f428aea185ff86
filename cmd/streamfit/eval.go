package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
)

func init() {
	register("eval", "score a fitted model: against the truth it was generated from, on held-out documents, or by topic coherence", runEval)
}

func runEval(ctx context.Context, args []string) error {
	fs := newFlags("eval", "", `Matches the fitted components to the true ones (Hungarian algorithm) and reports
the papers' metrics: for topic models the mean and max ℓ1 distance, the number of
topics found (ℓ1 < 0.5) and the relative α error; for GMMs and snapshot models the
relative spectral-norm errors after relabelling and the ℓ1 error of distributions.
With --coherence TRAIN, scores a topic model without truth instead: the
coherence of its topics over TRAIN and their diversity. With --heldout or
--coherence, --model may also be a .npy k×d matrix (e.g. numpy.save of gensim's
get_topics()) or a Parquet topic matrix (the layout of fit --topics-parquet).`)
	modelPath := fs.String("model", "model.json", "fitted model file")
	truthPath := fs.String("truth", "truth.json", "truth file written by `streamfit gen`")
	asJSON := fs.Bool("json", false, "print JSON")
	heldout := fs.String("heldout", "", "lda/topic: held-out documents to score instead of a truth file: document-completion perplexity (alternate tokens observed/predicted, topics mixed with uniform by 0.001)")
	var mf modelFlags
	mf.add(fs)
	var cf coherenceFlags
	cf.add(fs)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	switch {
	case *heldout != "" && cf.train != "":
		return usagef("--heldout and --coherence are separate runs; give one")
	case *heldout != "":
		return evalHeldOut(ctx, &mf, *modelPath, *heldout, *asJSON) // heldout.go
	case cf.train != "":
		return runCoherence(ctx, *modelPath, &mf, &cf, *asJSON)
	}
	kind, err := modelKind(*modelPath)
	if err != nil {
		return err
	}
	if tk, err := modelKind(*truthPath); err != nil {
		return err
	} else if tk != kind {
		return fmt.Errorf("%s is a %q model but %s holds %q truth", *modelPath, kind, *truthPath, tk)
	}
	var res any
	var text string
	switch kind {
	case "lda", "topic":
		fit, err := models.Read(*modelPath)
		if err != nil {
			return err
		}
		truth, err := models.Read(*truthPath)
		if err != nil {
			return err
		}
		e, err := models.Evaluate(fit, truth)
		if err != nil {
			return err
		}
		res = e
		text = fmt.Sprintf("topics:    %d fitted, %d true\nmean ℓ1:   %.4f\nmax ℓ1:    %.4f\nfound:     %d/%d (ℓ1 < %.1f)\nα error:   %.4f (relative)\n",
			e.K, e.TruthK, e.MeanL1, e.MaxL1, e.Found, e.TruthK, models.FoundL1, e.AlphaRelErr)
	case "gmm":
		res, err = evalDense(*modelPath, *truthPath, gmm.Read, gmm.Eval)
	case "markov", "hmm-snapshot":
		res, err = evalDense(*modelPath, *truthPath, markov.Read, markov.Eval)
	case "ica":
		res, err = evalDense(*modelPath, *truthPath, ica.Read, ica.Eval)
	case "hmm":
		res, err = evalDense(*modelPath, *truthPath, hmm.Read, hmm.Eval)
	case "multiview":
		res, err = evalDense(*modelPath, *truthPath, multiview.Read, multiview.Eval)
	default:
		return fmt.Errorf("%s: unknown model %q", *modelPath, kind)
	}
	if err != nil {
		return err
	}
	if text == "" {
		text = metricsText(res)
	}
	if *asJSON {
		return printEvalJSON(res, *modelPath)
	}
	fmt.Print(text)
	return nil
}

// modelKind reads the "model" field of a model or truth file.
func modelKind(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var head struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", fmt.Errorf("%s: not a model or truth file: %w", path, err)
	}
	if head.Model == "" {
		return "", fmt.Errorf("%s: no \"model\" field; not a streamfit model or truth file", path)
	}
	return head.Model, nil
}

// evalDense reads a fitted model and its truth with read and compares them
// with eval (each dense model package provides both).
func evalDense[M, E any](modelPath, truthPath string, read func(string) (M, error), eval func(M, M) (E, error)) (any, error) {
	fit, err := read(modelPath)
	if err != nil {
		return nil, err
	}
	truth, err := read(truthPath)
	if err != nil {
		return nil, err
	}
	return eval(fit, truth)
}

// metricsText prints a metrics struct one field a line, by its JSON names
// (which say what each error is: rel_err, l1, ...).
func metricsText(res any) string {
	b, _ := json.Marshal(res)
	var m map[string]any
	json.Unmarshal(b, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out string
	for _, k := range keys {
		switch v := m[k].(type) {
		case float64:
			out += fmt.Sprintf("%-22s %.4g\n", k+":", v)
		case []any:
			out += fmt.Sprintf("%-22s %v\n", k+":", v)
		}
	}
	return out
}
