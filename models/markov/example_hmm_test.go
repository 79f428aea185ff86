package markov_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream/synth"
)

// Learn a 3-state HMM with 5-dimensional Gaussian observations from 20,000
// unordered snapshot sets of 60 rows each, with the snapshot rate r known,
// and compare it with the HMM the sets were drawn from.
func ExampleFitHMM() {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 20000, PerSet: 60, K: 3, M: 5, Sigma2: 0.5, Seed: 2})
	if err != nil {
		panic(err)
	}
	m, err := markov.FitHMM(context.Background(), src, markov.Config{K: 3, R: 0.3, Seed: 3})
	if err != nil {
		panic(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d states over %d dimensions from %d sets; P within 0.05: %v, U within 0.05: %v\n", m.K, m.D, m.Fit.Sets, ev.P < 0.05, ev.U < 0.05)
	// Output: 3 states over 5 dimensions from 20000 sets; P within 0.05: true, U within 0.05: true
}
