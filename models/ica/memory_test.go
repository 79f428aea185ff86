package ica_test

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestMemoryIndependentOfRows: every statistic is O(d² + k³) and batches are
// released as they are consumed, so 4× the rows must not raise the peak heap
// by more than GC timing noise of a few batches. The limit, 2 MB, is a tenth
// of the 19 MB the extra 30000 rows would take if they were kept.
func TestMemoryIndependentOfRows(t *testing.T) {
	memtest.Check(t, 10000, 2<<20, func(rows int64) error {
		src, err := synth.NewICA(synth.ICAConfig{Rows: rows, D: 60, K: 5, Sigma: 0.2, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			return err
		}
		_, err = ica.Fit(context.Background(), src, ica.Config{K: 5, Seed: 1})
		return err
	})
}
