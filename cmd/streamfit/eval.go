package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/markov"
)

func init() {
	register("eval", "compare a fitted model with the truth it was generated from", runEval)
}

func runEval(ctx context.Context, args []string) error {
	fs := newFlags("eval", "", `Matches the fitted components to the true ones (Hungarian algorithm) and reports
the papers' metrics: for topic models the mean and max ℓ1 distance, the number of
topics found (ℓ1 < 0.5) and the relative α error; for GMMs and snapshot models the
relative spectral-norm errors after relabelling and the ℓ1 error of distributions.`)
	modelPath := fs.String("model", "model.json", "fitted model file")
	truthPath := fs.String("truth", "truth.json", "truth file written by `streamfit gen`")
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
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
		fit, err := gmm.Read(*modelPath)
		if err != nil {
			return err
		}
		truth, err := gmm.Read(*truthPath)
		if err != nil {
			return err
		}
		e, err := gmm.Eval(fit, truth)
		if err != nil {
			return err
		}
		res = e
		text = fmt.Sprintf("means:     %.4f (relative spectral-norm error)\nweights:   %.4f (ℓ1)\nvariances: %.4f (max relative error)\n", e.Means, e.Weights, e.Variances)
	case "markov", "hmm-snapshot":
		fit, err := markov.Read(*modelPath)
		if err != nil {
			return err
		}
		truth, err := markov.Read(*truthPath)
		if err != nil {
			return err
		}
		e, err := markov.Eval(fit, truth)
		if err != nil {
			return err
		}
		res = e
		text = fmt.Sprintf("P:         %.4f (relative spectral-norm error)\n", e.P)
		if kind == "markov" {
			text += fmt.Sprintf("T:         %.4f\n", e.T)
		} else {
			text += fmt.Sprintf("U:         %.4f\nUT:        %.4f\n", e.U, e.UT)
		}
		text += fmt.Sprintf("π:         %.4f (ℓ1)\nr:         %.4g fitted, %.4g true\n", e.Pi, fit.R, truth.R)
	default:
		return fmt.Errorf("%s: unknown model %q", *modelPath, kind)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
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
