package implicit

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"testing"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// benchBatch is one batch of the issue-3 benchmark corpus (vocabulary 10,000,
// k=50, length 200).
func benchBatch(b *testing.B) *stream.Docs {
	all, err := ldaDocs(4096, 10000, 50, 200, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	return all
}

// ldaDocs returns the documents of the LDA corpus that synth.NewLDA
// generates with these settings (α₀ = 1; batchRows 0: the default). The
// generators of stream/synth return the dense models' own types, and those
// models import this package, so an internal test cannot import synth: the
// external test package sets ldaDocs (corpus_test.go).
var ldaDocs func(docs int64, vocab, k int, docLen float64, seed uint64, batchRows int) (*stream.Docs, error)

// repeat is a pass of b yielded times times, as a source yields its batches
// (each a view, so the pass may release it).
func repeat(b *stream.Docs, times int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			for range times {
				if !yield(&stream.Docs{Start: b.Start, Offsets: b.Offsets, Terms: b.Terms, Counts: b.Counts}, nil) {
					return
				}
			}
		}
	}
}

// benchBatches is the number of batches of one benchmark pass, so the
// per-pass set-up is amortised as in a real pass (corpus M has 50 batches
// of 4000 documents).
const benchBatches = 8

// go test ./implicit/ -run '^$' -bench 'Pass|Cubes' -count 5
func BenchmarkPairPass(b *testing.B) {
	batch := benchBatch(b)
	for _, c := range []struct {
		name  string
		omega mat.Matrix
	}{
		{"gaussian", randDense(10000, 60, 1)},
		{"sparse-sign", sketch.SparseSign(10000, 60, sketch.DefaultSparsity, 1)},
	} {
		b.Run(c.name, func(b *testing.B) {
			acc := NewPairAcc(10000, 60)
			acc.Float32 = true
			b.ReportAllocs()
			cpu := sysinfo.CPUTime()
			for b.Loop() {
				if err := acc.Pass(context.Background(), repeat(batch, benchBatches), 1, c.omega, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch.NNZ()*benchBatches*b.N)/(sysinfo.CPUTime()-cpu).Seconds(), "nnz/cpu-s")
		})
	}
}

// BenchmarkCubes is the Y3 part of BenchmarkTripleAdd alone: Σ y⊗y⊗y/n3
// over one batch's documents, reported in useful multiply-adds (one per
// distinct entry a ≤ b ≤ c) per second.
func BenchmarkCubes(b *testing.B) {
	b.Run("float64", func(b *testing.B) { benchCubes[float64](b) })
	b.Run("float32", func(b *testing.B) { benchCubes[float32](b) })
}

func benchCubes[F real](b *testing.B) {
	const n, k = 4096, 50
	x := convert[F](nil, randDense(n, k, 1).RawMatrix().Data)
	dst := make([]F, k*pairs(k))
	var kr []F
	for b.Loop() {
		kr = addCubes(dst, x, k, x, nil, n, k, kr)
	}
	b.ReportMetric(float64(n*k*(k+1)*(k+2)/6)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFMA/s")
}

// BenchmarkTriplePass is the third-moment pass over every document's cubes
// and over a sample of 7% of them (as on the Debian descriptions repeated
// to 1.5 million documents), with the pair sums and without (NoPair).
func BenchmarkTriplePass(b *testing.B) {
	batch := benchBatch(b)
	w := randDense(10000, 50, 1)
	for _, rate := range []float64{1, 0.07} {
		for _, noPair := range []bool{false, true} {
			b.Run(fmt.Sprintf("cubes=%g/nopair=%t", rate, noPair), func(b *testing.B) {
				acc := NewTripleAcc(10000, 50)
				acc.Float32 = true
				acc.Cubes = DocSample{Rate: rate, Seed: 1}
				if noPair {
					acc.SkipPair()
				}
				b.ReportAllocs()
				cpu := sysinfo.CPUTime()
				for b.Loop() {
					if err := acc.Pass(context.Background(), repeat(batch, benchBatches), 1, w, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(batch.NNZ()*benchBatches*b.N)/(sysinfo.CPUTime()-cpu).Seconds(), "nnz/cpu-s")
			})
		}
	}
}

// BenchmarkAxpy is the kernel of the passes' gathers and scatters alone: one
// float32 axpy of w values from a row of a 10,000-row table picked as a
// document's terms pick them (the order the gathers used before they went
// term by term, see BenchmarkGather), reported in multiply-adds per
// CPU-second (the unit of the lower bound in bench/lda/RESULTS.md).
func BenchmarkAxpy(b *testing.B) {
	batch := benchBatch(b)
	for _, w := range []int{50, 60, 100} {
		b.Run(strconv.Itoa(w), func(b *testing.B) {
			x := convert[float32](nil, randDense(10000, w, 1).RawMatrix().Data)
			sum := make([]float32, w)
			cpu := sysinfo.CPUTime()
			for b.Loop() {
				for i := range batch.Len() {
					terms, counts := batch.Doc(i)
					for j, t := range terms {
						axpy(float32(counts[j]), x[int(t)*w:int(t+1)*w], sum)
					}
				}
			}
			b.ReportMetric(float64(batch.NNZ()*w*b.N)/(sysinfo.CPUTime()-cpu).Seconds()/1e9, "GFMA/cpu-s")
		})
	}
}

// BenchmarkGather is the gather of a pass (y = Wᵀc for every document of a
// batch) at the Wikipedia-shaped benchmark's shape (vocabulary 100,000,
// k=100, mean length 160; W of 40 MB in float32, larger than the caches),
// term by term as the passes do it, against document by document (each
// occurrence reads its row of W), in entries per CPU-second:
//
//	go test ./implicit -run '^$' -bench Gather -count 5
func BenchmarkGather(b *testing.B) {
	const d, k = 100000, 100
	docs, err := ldaDocs(4096, d, k, 160, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	var p batch
	p.prepare(docs, d)
	x := convert[float32](nil, randDense(d, k, 1).RawMatrix().Data)
	out := make([]float32, p.n*k)
	run := func(b *testing.B, f func()) {
		cpu := sysinfo.CPUTime()
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64(docs.NNZ()*b.N)/(sysinfo.CPUTime()-cpu).Seconds()/1e6, "Mnnz/cpu-s")
	}
	b.Run("term-major", func(b *testing.B) {
		run(b, func() { gather(&p.tm, p.n, x, k, out, nil) })
	})
	b.Run("document-major", func(b *testing.B) {
		sum := make([]float32, k)
		run(b, func() {
			for i := range docs.Len() {
				clear(sum)
				terms, counts := docs.Doc(i)
				for j, t := range terms {
					axpy(float32(counts[j]), x[int(t)*k:int(t+1)*k], sum)
				}
				r := int(p.docRow[i])
				copy(out[r*k:(r+1)*k], sum)
			}
		})
	})
}

// BenchmarkTransform re-whitens a k×k×k tensor by a square P, as the
// explicit fit does before its solve.
func BenchmarkTransform(b *testing.B) {
	for _, k := range []int{100, 200} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			tt := tensor.NewSym3(k)
			for i := range tt.Data {
				tt.Data[i] = float64(i%7) - 3
			}
			p := randDense(k, k, 2)
			b.ReportAllocs()
			for b.Loop() {
				Transform(tt, p)
			}
		})
	}
}
