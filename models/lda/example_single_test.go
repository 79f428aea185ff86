package lda_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit the exchangeable single-topic model (one topic per document; the
// command line's "topic") by its two moment passes alone, and score it
// against the topics the corpus was drawn from.
func ExampleFit_single() {
	src, err := synth.NewLDA(synth.LDAConfig{Docs: 4000, Vocab: 300, K: 3, DocLen: 40, Single: true, Seed: 2})
	if err != nil {
		panic(err)
	}
	m, err := lda.Fit(context.Background(), src, lda.Config{K: 3, Single: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	tr := src.Truth
	ev, err := models.Evaluate(m, &models.Model{K: tr.K, D: tr.D, Alpha: tr.Alpha, Topics: tr.Topics})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d topics over %d words in %d passes; %d of 3 recovered within ℓ1 %.1f\n",
		m.Model, m.K, m.D, m.Fit.Passes, ev.Found, models.FoundL1)
	// Output:
	// topic: 3 topics over 300 words in 2 passes; 3 of 3 recovered within ℓ1 0.5
}
