package ica_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// BenchmarkFit times a fit on 20000 in-memory rows for growing k = d: the
// cost per row of the cumulant pass is O(k³) and of a polishing pass O(k²).
func BenchmarkFit(b *testing.B) {
	for _, k := range []int{10, 30} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			g, err := synth.NewICA(synth.ICAConfig{Rows: 20000, D: k, K: k, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			all, err := stream.CollectDense(context.Background(), g)
			if err != nil {
				b.Fatal(err)
			}
			src := &stream.MemoryDense{All: all}
			b.ResetTimer()
			for b.Loop() {
				if _, err := ica.Fit(context.Background(), src, ica.Config{K: k, Seed: 1, Workers: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
