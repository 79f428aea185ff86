package ica_test

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestMemoryIndependentOfRows: every statistic is O(d² + k³) on the exact
// path and O(d·(k+Oversample) + k³) on the sketched one, and batches are
// released as they are consumed, so 4× the rows must not raise the peak
// heap by more than GC timing noise of a few batches. The limit, 2 MB, is
// a tenth of the 19 MB the extra 30000 rows of the exact case would take
// if they were kept. The sketched case, at d = 1500, must also stay far
// below the 18 MB of one d×d matrix.
func TestMemoryIndependentOfRows(t *testing.T) {
	for _, c := range []struct {
		name      string
		rows      int64
		d, k, max int
		batchRows int
	}{{"exact", 10000, 60, 5, 0, 256}, {"sketch", 500, 1500, 3, 12 << 20, 32}} {
		t.Run(c.name, func(t *testing.T) {
			var peak uint64
			// At d = 1500 one batch in flight is 0.4 MB, and on a loaded
			// machine a few more are seen before the collector catches up:
			// 4 MB is still a fifth of what keeping the extra rows takes.
			slack := uint64(2 << 20)
			if c.d > 1000 {
				slack = 4 << 20
			}
			memtest.Check(t, c.rows, slack, func(rows int64) error {
				src, err := synth.NewICA(synth.ICAConfig{Rows: rows, D: c.d, K: c.k, Sigma: 0.2, Seed: 2, BatchRows: c.batchRows, Workers: 1})
				if err != nil {
					return err
				}
				p := memtest.PeakHeap(func() {
					_, err = ica.Fit(context.Background(), src, ica.Config{K: c.k, Seed: 1})
				})
				peak = max(peak, p)
				return err
			})
			if c.max > 0 && peak > uint64(c.max) {
				t.Errorf("peak heap %.1f MB on the sketched path at d=%d: something d×d is allocated", float64(peak)/1e6, c.d)
			}
		})
	}
}
