package implicit

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
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
	omega := randDense(10000, 60, 1)
	acc := NewPairAcc(10000, 60)
	cpu := cpuTime()
	for b.Loop() {
		acc.Add(batch, omega)
	}
	b.ReportMetric(float64(batch.NNZ()*b.N)/(cpuTime()-cpu).Seconds(), "nnz/cpu-s")
}

func BenchmarkTripleAdd(b *testing.B) {
	batch := benchBatch(b)
	w := randDense(10000, 50, 1)
	acc := NewTripleAcc(10000, 50)
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
