package implicit_test

import (
	"context"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// The internal benchmarks draw their corpora from stream/synth through
// this hook, which they cannot import (see ldaDocs).
func init() {
	implicit.SetLDADocs(func(docs int64, vocab, k int, docLen float64, seed uint64, batchRows int) (*stream.Docs, error) {
		c, err := synth.NewLDA(synth.LDAConfig{Docs: docs, Vocab: vocab, K: k, Alpha0: 1, DocLen: docLen, Seed: seed, BatchRows: batchRows})
		if err != nil {
			return nil, err
		}
		return stream.Collect(context.Background(), c)
	})
}
