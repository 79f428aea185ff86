package implicit

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// benchBatch is one batch of the issue-3 benchmark corpus (vocabulary 10,000,
// k=50, length 200).
func benchBatch(b *testing.B) *stream.Docs {
	c, err := synth.NewLDA(synth.LDAConfig{Docs: 4096, Vocab: 10000, K: 50, Alpha0: 1, DocLen: 200, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	all, err := stream.Collect(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	return all
}

// go test ./implicit/ -run '^$' -bench . -benchtime 20x
func BenchmarkPairAdd(b *testing.B) {
	batch := benchBatch(b)
	for _, c := range []struct {
		name  string
		omega mat.Matrix
	}{
		{"gaussian", randDense(10000, 75, 1)},
		{"sparse-sign", sketch.SparseSign(10000, 75, sketch.DefaultSparsity, 1)},
	} {
		b.Run(c.name, func(b *testing.B) {
			acc := NewPairAcc(10000, 75)
			acc.Float32 = true
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				acc.Add(batch, c.omega)
			}
			b.ReportMetric(float64(batch.NNZ()*b.N)/(cpuTime()-cpu).Seconds(), "nnz/cpu-s")
		})
	}
}

// BenchmarkCubes is the Y3 part of BenchmarkTripleAdd alone: Σ y⊗y⊗y/n3
// over one batch's documents, reported in useful multiply-adds (one per
// distinct entry a ≤ b ≤ c) per second.
func BenchmarkCubes(b *testing.B) {
	const n, k = 4096, 50
	x := randDense(n, k, 1).RawMatrix().Data
	dst := make([]float64, k*pairs(k))
	var kr []float64
	for b.Loop() {
		kr = addCubes(dst, x, k, x, n, k, kr)
	}
	b.ReportMetric(float64(n*k*(k+1)*(k+2)/6)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFMA/s")
}

func BenchmarkTripleAdd(b *testing.B) {
	batch := benchBatch(b)
	w := randDense(10000, 50, 1)
	acc := NewTripleAcc(10000, 50)
	acc.Float32 = true
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		acc.Add(batch, w)
	}
	b.ReportMetric(float64(batch.NNZ()*b.N)/(cpuTime()-cpu).Seconds(), "nnz/cpu-s")
}

// cpuTime is the process's user+system CPU time: on a shared machine it is a
// steadier measure of work than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
