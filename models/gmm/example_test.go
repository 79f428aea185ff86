package gmm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit a mixture of 4 spherical Gaussians in 20 dimensions from a Parquet
// file of samples, in two passes over the file, and compare it with the
// mixture the samples were drawn from.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "samples.parquet")

	// 60000 samples, written as a Parquet column of 20-value rows.
	gen, err := synth.NewGMM(synth.GMMConfig{Rows: 60000, D: 20, K: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	w, err := stream.CreateDense(path, stream.WriteOptions{})
	if err != nil {
		panic(err)
	}
	for rows, err := range gen.Rows(ctx) {
		if err != nil {
			panic(err)
		}
		if err := w.Write(rows); err != nil {
			panic(err)
		}
		rows.Release()
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	src, err := stream.OpenDense(path, stream.Options{})
	if err != nil {
		panic(err)
	}
	defer stream.Close(src)
	m, err := gmm.Fit(ctx, src, gmm.Config{K: 4, Seed: 2})
	if err != nil {
		panic(err)
	}
	ev, err := gmm.Eval(m, gmm.TruthOf(gen))
	if err != nil {
		panic(err)
	}
	fmt.Printf("k=%d in d=%d; means within 5%%: %v, weights within 0.05: %v\n", m.K, m.D, ev.Means < 0.05, ev.Weights < 0.05)
	// Output: k=4 in d=20; means within 5%: true, weights within 0.05: true
}
