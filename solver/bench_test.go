package solver

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkSym3Apply measures one block contraction T(I,θ,θ) for k = 50, L = 50.
func BenchmarkSym3Apply(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	s, _ := randomSym(50, rng)
	theta := randDense(50, 50, rng)
	dst := mat.NewDense(50, 50, nil)
	ctx := context.Background()
	_ = s.Apply(ctx, dst, theta) // build the unfolding outside the loop
	b.ResetTimer()
	for range b.N {
		_ = s.Apply(ctx, dst, theta)
	}
	b.ReportMetric(float64(50*50*51/2*50*2)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
