package hmm_test

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestMemoryIndependentOfRows: the fit keeps O(d² + k³) statistics, a block
// of triples and two rows of carry, so 4× the rows (150000 more, 24 MB of
// data) must not raise the peak heap by more than 2 MB of GC timing noise.
func TestMemoryIndependentOfRows(t *testing.T) {
	memtest.Check(t, 5000, 2<<20, func(seqs int64) error {
		src, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: seqs, Len: 10, K: 3, D: 20, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			return err
		}
		_, err = hmm.Fit(context.Background(), src, hmm.Config{K: 3, Windows: true, Seed: 1})
		return err
	})
}
