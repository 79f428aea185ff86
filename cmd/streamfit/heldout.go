package main

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// evalHeldOut prints the document-completion perplexity of the lda/topic
// model at modelPath (model.json, or a topic matrix read as mf says) on the
// held-out documents at path (lda.Perplexity).
func (e *env) evalHeldOut(ctx context.Context, mf *modelFlags, modelPath, path string, asJSON bool) error {
	m, err := mf.load(modelPath)
	if err != nil {
		return err
	}
	single := m.Model == lda.TopicKind.Name()
	if m.Model != lda.Kind.Name() && !single {
		return fmt.Errorf("%s: --heldout scores topic models, not %q", modelPath, m.Model)
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
