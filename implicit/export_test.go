package implicit

import "github.com/streamfit/streamfit/stream"

// SetLDADocs sets the corpus generator of the internal benchmarks (see
// ldaDocs).
func SetLDADocs(f func(docs int64, vocab, k int, docLen float64, seed uint64, batchRows int) (*stream.Docs, error)) {
	ldaDocs = f
}

// SetLDATruth sets the generator of BenchmarkEMPass's corpus and its true
// topics (see ldaTruth).
func SetLDATruth(f func(docs int64, vocab, k int, docLen float64, seed uint64) (*stream.Docs, [][]float64, []float64, error)) {
	ldaTruth = f
}
