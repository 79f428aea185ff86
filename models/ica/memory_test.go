package ica

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream/synth"
)

// peakHeap runs f while sampling the live heap every millisecond and returns
// the largest sample above the starting level.
func peakHeap(f func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ss := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(ss)
			peak = max(peak, ss[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// TestMemoryIndependentOfRows: every statistic is O(d² + k⁴) and batches are
// released as they are consumed, so 4× the rows must not raise the peak heap
// by more than GC timing noise of a few batches (median of three runs). The
// limit, 2 MB, is a tenth of the 19 MB the extra 30000 rows would take if
// they were kept; the peaks themselves are well under 1 MB.
func TestMemoryIndependentOfRows(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two tables")
	}
	peak := func(rows int64) uint64 {
		src, err := synth.NewICA(synth.ICAConfig{Rows: rows, D: 60, K: 5, Sigma: 0.2, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var p [3]uint64
		for i := range p {
			p[i] = peakHeap(func() {
				if _, err := Fit(context.Background(), src, Config{K: 5, Seed: 1}); err != nil {
					t.Error(err)
				}
			})
		}
		slices.Sort(p[:])
		return p[1]
	}
	small, large := peak(10000), peak(40000)
	t.Logf("peak heap %.2f MB at 10000 rows, %.2f MB at 40000", float64(small)/1e6, float64(large)/1e6)
	if large > small+2<<20 {
		t.Errorf("peak heap grew from %.2f MB to %.2f MB for 4× the rows (limit +2 MB)", float64(small)/1e6, float64(large)/1e6)
	}
}
