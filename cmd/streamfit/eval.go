package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// evalAbout is the help of `streamfit eval`.
const evalAbout = `Matches the fitted components to the true ones (Hungarian algorithm) and reports
the papers' metrics: for topic models the mean and max ℓ1 distance, the number of
topics found (ℓ1 < 0.5) and the relative α error; for GMMs and snapshot models the
relative spectral-norm errors after relabelling and the ℓ1 error of distributions.
With --coherence TRAIN, scores a topic model without truth instead: the
coherence of its topics over TRAIN and their diversity. With --heldout and a gmm,
scores held-out rows instead: their average log-likelihood per row (scikit-learn's
GaussianMixture.score); with an hmm, held-out sequences (--group-column), the
log-likelihood of each sequence per row. With --heldout or --coherence, --model may also be a .npy k×d matrix (e.g. numpy.save of gensim's
get_topics()) or a Parquet topic matrix (the layout of fit --topics-parquet).`

func runEval(ctx context.Context, e *env, args []string) error {
	fs := newFlags("eval", "", evalAbout)
	modelPath := fs.String("model", "model.json", "fitted model file")
	truthPath := fs.String("truth", "truth.json", "truth file written by `streamfit gen`")
	asJSON := fs.Bool("json", false, "print JSON")
	heldout := fs.String("heldout", "", "held-out data to score instead of a truth file: for lda/topic documents, by document-completion perplexity (alternate tokens observed/predicted, topics mixed with uniform by 0.001); for gmm and hmm dense rows (--values-column, --columns; an hmm's sequence ids in --group-column), by the average log-likelihood per row")
	var rows stream.Options
	addDenseFlags(fs, &rows, true)
	var mf modelFlags
	mf.add(fs)
	var cf coherenceFlags
	cf.add(fs)
	if pos, err := e.parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	switch {
	case *heldout != "" && cf.train != "":
		return usagef("--heldout and --coherence are separate runs; give one")
	case *heldout != "":
		return e.evalHeldOut(ctx, &mf, *modelPath, *heldout, rows, *asJSON) // heldout.go
	case cf.train != "":
		return e.runCoherence(ctx, *modelPath, &mf, &cf, *asJSON)
	}
	res, err := evalTruth(*modelPath, *truthPath)
	if err != nil {
		return err
	}
	if *asJSON {
		return e.printEvalJSON(res, *modelPath)
	}
	if t, ok := res.(interface{ Text() string }); ok {
		fmt.Fprint(e.stdout, t.Text())
	} else {
		fmt.Fprint(e.stdout, metricsText(res))
	}
	return nil
}

// evalTruth compares the model in the file modelPath with the truth in the
// file truthPath, both read by their kind (models.Evaluator).
func evalTruth(modelPath, truthPath string) (any, error) {
	kind, err := modelKind(modelPath)
	if err != nil {
		return nil, err
	}
	if tk, err := modelKind(truthPath); err != nil {
		return nil, err
	} else if tk != kind {
		return nil, fmt.Errorf("%s is a %q model but %s holds %q truth", modelPath, kind, truthPath, tk)
	}
	k, err := models.Lookup(kind)
	if err != nil {
		return nil, fmt.Errorf("%s: unknown model %q", modelPath, kind)
	}
	fit, err := k.Read(modelPath)
	if err != nil {
		return nil, err
	}
	truth, err := k.Read(truthPath)
	if err != nil {
		return nil, err
	}
	ev, ok := fit.(models.Evaluator)
	if !ok {
		return nil, fmt.Errorf("%s: a %q model: no evaluation against a truth file", modelPath, kind)
	}
	return ev.Eval(truth)
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
