package ica_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit a 3-source ICA model to generated data with mixed-sign kurtoses and
// compare it with the truth.
func Example() {
	src, err := synth.NewICA(synth.ICAConfig{Rows: 30000, D: 6, K: 3, Sigma: 0.1, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := ica.Fit(context.Background(), src, ica.Config{K: 3, Seed: 1})
	if err != nil {
		panic(err)
	}
	ev, err := ica.Eval(m, ica.TruthOf(src))
	if err != nil {
		panic(err)
	}
	fmt.Println("mixing error below 0.05:", ev.Mixing < 0.05)
	// Output: mixing error below 0.05: true
}
