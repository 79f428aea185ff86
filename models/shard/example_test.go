package shard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit a Gaussian mixture shard by shard: the statistics of each pass over
// two halves of a Parquet file (its row groups), merged, give the
// statistics of the whole file bit for bit, and the model fitted from them.
func ExampleDense_Stats() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rows.parquet")
	gen, err := synth.NewGMM(synth.GMMConfig{Rows: 8000, D: 5, K: 3, Seed: 1})
	if err != nil {
		panic(err)
	}
	w, err := stream.CreateDense(path, stream.WriteOptions{RowGroupRows: 2000})
	if err != nil {
		panic(err)
	}
	for b, err := range gen.Rows(ctx) {
		if err != nil {
			panic(err)
		}
		if err := w.Write(b); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	wf := shard.DenseOf(gmm.Kind.Passes(gmm.Config{K: 3, Seed: 2}))
	halves := []shard.Part{{Path: path, Pieces: &[2]int64{0, 2}}, {Path: path, Pieces: &[2]int64{2, 4}}}
	var merged, whole *implicit.DenseStats
	for {
		var shards []*implicit.DenseStats
		for _, part := range halves {
			st, err := wf.Stats(ctx, []shard.Part{part}, stream.Options{}, merged)
			if err != nil {
				panic(err)
			}
			shards = append(shards, st)
		}
		if err := shards[0].Merge(shards[1]); err != nil {
			panic(err)
		}
		all, err := wf.Stats(ctx, []shard.Part{{Path: path}}, stream.Options{}, whole)
		if err != nil {
			panic(err)
		}
		fmt.Printf("pass %d: the merged halves equal the whole file: %v\n", shards[0].Header.Phase, sameSums(shards[0], all))
		merged, whole = shards[0], all
		if last, err := wf.Last(ctx, merged); err != nil || last {
			break
		}
	}
	m, err := gmm.FitStats(ctx, merged, gmm.Config{Seed: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d components from %d rows\n", m.K, m.Fit.Rows)
	// Output:
	// pass 1: the merged halves equal the whole file: true
	// pass 2: the merged halves equal the whole file: true
	// 3 components from 8000 rows
}

// sameSums reports whether a and b hold the same totals, bit for bit.
func sameSums(a, b *implicit.DenseStats) bool {
	for i, s := range a.Sums {
		if !slices.Equal(s.Floats(), b.Sums[i].Floats()) {
			return false
		}
	}
	return a.Rows == b.Rows
}
