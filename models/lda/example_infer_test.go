package lda_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream/synth"
)

// Infer the topic shares of documents with a fitted model's topics fixed,
// and score documents by document completion (held-out perplexity) with
// the fitted topics and with the generator's, by the same code.
func ExampleInfer() {
	ctx := context.Background()
	corpus, err := synth.NewLDA(synth.LDAConfig{Docs: 5000, Vocab: 500, K: 3, Alpha0: 1, DocLen: 100, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := lda.Fit(ctx, corpus, lda.DefaultConfig(3))
	if err != nil {
		panic(err)
	}
	p, err := lda.ModelParams(m, 0)
	if err != nil {
		panic(err)
	}
	docs, sum := 0, 0.0
	err = lda.Infer(ctx, corpus, p, 0, func(start int64, n int, theta []float64) error {
		docs += n // theta holds n rows of k shares, in document order
		for _, s := range theta {
			sum += s
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d documents, shares summing to %.0f each\n", docs, sum/float64(docs))

	fitted, err := lda.Perplexity(ctx, corpus, m.Topics, m.Alpha, lda.ScoreOptions{})
	if err != nil {
		panic(err)
	}
	truth, err := lda.Perplexity(ctx, corpus, corpus.Truth.Topics, corpus.Truth.Alpha, lda.ScoreOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("perplexity within 2%% of the true topics': %v\n", fitted.Perplexity < 1.02*truth.Perplexity)
	// Output:
	// 5000 documents, shares summing to 1 each
	// perplexity within 2% of the true topics': true
}
