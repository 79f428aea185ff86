package gmm_test

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream/synth"
)

// Memory does not grow with the rows on either path, and the sketched path
// at d = 1500 holds nothing d×d: its peak stays far below the 18 MB one such
// matrix would take.
func TestMemoryIndependentOfRows(t *testing.T) {
	for _, c := range []struct {
		name   string
		d, max int
	}{{"exact", 60, 0}, {"sketch", 1500, 12 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			var peak uint64
			// At d = 1500 one batch in flight is 0.4 MB, and on a loaded
			// machine a few more are seen before the collector catches up:
			// 4 MB is still a fifth of what keeping the extra rows takes.
			slack := uint64(2 << 20)
			if c.d > 1000 {
				slack = 4 << 20
			}
			memtest.Check(t, 1000, slack, func(rows int64) error {
				// Batches of 32 rows keep the generator's own buffers (a few
				// batches in flight) under 2 MB at d = 1500.
				src, err := synth.NewGMM(synth.GMMConfig{Rows: rows, D: c.d, K: 3, Seed: 2, BatchRows: 32, Workers: 1})
				if err != nil {
					return err
				}
				p := memtest.PeakHeap(func() {
					_, err = gmm.Fit(context.Background(), src, gmm.Config{K: 3, Seed: 1})
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
