package lda_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit an LDA model with the command line's defaults (spectral start, then EM
// passes) to a generated corpus and score it against the truth.
func ExampleFit() {
	src, err := synth.NewLDA(synth.LDAConfig{Docs: 5000, Vocab: 500, K: 3, Alpha0: 1, DocLen: 100, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := lda.Fit(context.Background(), src, lda.DefaultConfig(3))
	if err != nil {
		panic(err)
	}
	tr := src.Truth
	ev, err := models.Evaluate(m, &models.Model{K: tr.K, D: tr.D, Alpha: tr.Alpha, Topics: tr.Topics})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d topics over %d words in %d passes (%d of them EM); %d of 3 recovered within ℓ1 %.1f\n",
		m.K, m.D, m.Fit.Passes, m.Fit.EM.Passes, ev.Found, models.FoundL1)
	// Output:
	// 3 topics over 500 words in 4 passes (2 of them EM); 3 of 3 recovered within ℓ1 0.5
}
