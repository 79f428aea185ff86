package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// evalHeldOut prints the document-completion perplexity of the lda/topic
// model at modelPath (model.json, or a topic matrix read as mf says) on the
// held-out documents at path (lda.Perplexity), or for a model of dense
// rows that has a likelihood (models.RowScoring), the average
// log-likelihood per row of the held-out rows at path, read as rows says.
func (e *env) evalHeldOut(ctx context.Context, mf *modelFlags, modelPath, path string, rows stream.Options, asJSON bool) error {
	if k := rowScorer(modelPath); k != nil {
		return e.evalHeldOutRows(ctx, k, modelPath, path, rows, asJSON)
	}
	m, err := mf.load(modelPath)
	if err != nil {
		return err
	}
	single := m.Model == lda.TopicKind.Name()
	if m.Model != lda.Kind.Name() && !single {
		return fmt.Errorf("%s: --heldout scores %s models, not %q", modelPath, strings.Join(append([]string{lda.Kind.Name(), lda.TopicKind.Name()}, models.Names(models.Scores)...), ", "), m.Model)
	}
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	h, err := lda.Perplexity(ctx, src, m.Topics, m.Alpha, lda.ScoreOptions{Single: single})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if asJSON {
		return e.printEvalJSON(h, modelPath)
	}
	fmt.Fprintf(e.stdout, "held-out perplexity: %.2f (document completion: %d documents, %d observed and %d predicted tokens, %d skipped; topics smoothed by %g)\n",
		h.Perplexity, h.Docs, h.Observed, h.Predicted, h.Skipped, h.Smooth)
	return nil
}

// rowScorer returns the kind of the model file at modelPath when its
// models score held-out rows (models.Scores), else nil (a topic model, a
// topic matrix, or a file that is no model, which mf.load then reports).
func rowScorer(modelPath string) models.Kind {
	name, err := modelKind(modelPath)
	if err != nil {
		return nil
	}
	k, err := models.Lookup(name)
	if err != nil || !models.Scores(k) {
		return nil
	}
	return k
}

// evalHeldOutRows prints the average log-likelihood per row of the rows at
// path under the model of kind k at modelPath.
func (e *env) evalHeldOutRows(ctx context.Context, k models.Kind, modelPath, path string, o stream.Options, asJSON bool) error {
	m, err := k.Read(modelPath)
	if err != nil {
		return err
	}
	src, err := stream.OpenDense(path, o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	sc, err := k.(models.RowScoring).ScoreRows(ctx, m, src, 0)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printEvalJSON(sc, modelPath)
	}
	fmt.Fprintf(e.stdout, "held-out log-likelihood: %.6g per row (%d rows of %s)\n", sc.LogLik, sc.Rows, path)
	return nil
}
