package multiview_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit a three-view mixture whose views are the column groups of each row.
func Example() {
	src, err := synth.NewMultiView(synth.MultiViewConfig{Rows: 30000, Dims: [3]int{4, 5, 6}, K: 3, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := multiview.Fit(context.Background(), src, multiview.Config{K: 3, Views: src.Truth.Views, Seed: 1})
	if err != nil {
		panic(err)
	}
	ev, err := multiview.Eval(m, multiview.TruthOf(src))
	if err != nil {
		panic(err)
	}
	fmt.Println("view means within 5%:", ev.Means[0] < 0.05 && ev.Means[1] < 0.05 && ev.Means[2] < 0.05)
	// Output: view means within 5%: true
}
