package hmm_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream/synth"
)

// Learn O, T and π of a 3-state HMM from 50000 sequences stored one row per
// time step with the sequence id.
func Example() {
	src, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 50000, Len: 5, K: 3, D: 5, Seed: 2})
	if err != nil {
		panic(err)
	}
	m, err := hmm.Fit(context.Background(), src, hmm.Config{K: 3, Seed: 1})
	if err != nil {
		panic(err)
	}
	ev, err := hmm.Eval(m, hmm.TruthOf(src))
	if err != nil {
		panic(err)
	}
	fmt.Println("O and T within 10%:", ev.O < 0.1 && ev.T < 0.1)
	// Output: O and T within 10%: true
}
