package markov_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream/synth"
)

// Learn a 4-state Markov chain from 20,000 unordered snapshot sets of 10
// one-hot rows each, with the snapshot rate r known, and compare it with the
// chain the sets were drawn from.
func ExampleFitChain() {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 20000, PerSet: 10, K: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := markov.FitChain(context.Background(), src, markov.Config{Alpha0: 1, R: 0.3, Seed: 3})
	if err != nil {
		panic(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d states from %d sets; T within 0.05: %v, P within 0.15: %v\n", m.K, m.Fit.Sets, ev.T < 0.05, ev.P < 0.15)
	// Output: 4 states from 20000 sets; T within 0.05: true, P within 0.15: true
}
