package lda_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit 2, 3 and 5 topics to a corpus drawn from 3, with EM passes whose
// reads serve every k, score each on every 10th document (held out from
// the fits) and let the held-out perplexity pick k. The vocabulary is
// whitened by a sketch, so 2 and 3 take the spectral passes of their own
// fits, and every model is Fit's for its k.
func ExampleFitK() {
	src, err := synth.NewLDA(synth.LDAConfig{Docs: 5000, Vocab: 500, K: 3, Alpha0: 1, DocLen: 100, Seed: 1})
	if err != nil {
		panic(err)
	}
	sw, err := lda.FitK(context.Background(), src, []int{2, 3, 5}, lda.DefaultConfig(0), lda.SweepOptions{})
	if err != nil {
		panic(err)
	}
	for _, s := range sw.Scores {
		fmt.Printf("k=%d: held-out perplexity %.0f on %d documents, NPMI %.2f, start shared %v, EM passes shared %v\n",
			s.K, s.Perplexity, s.HeldOut.Docs, s.NPMI, s.SharedStart, s.EMShared)
	}
	fmt.Printf("recommended k=%d (%d passes over the documents in all)\n", sw.Recommended, sw.Passes)
	// Output:
	// k=2: held-out perplexity 142 on 500 documents, NPMI 0.21, start shared false, EM passes shared true
	// k=3: held-out perplexity 121 on 500 documents, NPMI 0.33, start shared false, EM passes shared true
	// k=5: held-out perplexity 122 on 500 documents, NPMI 0.31, start shared true, EM passes shared true
	// recommended k=3 (10 passes over the documents in all)
}
