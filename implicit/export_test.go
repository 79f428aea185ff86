package implicit

import "github.com/streamfit/streamfit/stream"

// SetLDADocs sets the corpus generator of the internal benchmarks (see
// ldaDocs).
func SetLDADocs(f func(docs int64, vocab, k int, docLen float64, seed uint64, batchRows int) (*stream.Docs, error)) {
	ldaDocs = f
}
