package hmm

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

// TestMemoryIndependentOfRows: the fit keeps O(d² + k³) statistics, a block
// of triples and two rows of carry, so 4× the rows (150000 more, 24 MB of
// data) must not raise the peak heap by more than 2 MB of GC timing noise.
func TestMemoryIndependentOfRows(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two tables")
	}
	peak := func(seqs int64) uint64 {
		src, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: seqs, Len: 10, K: 3, D: 20, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var p [3]uint64
		for i := range p {
			p[i] = peakHeap(func() {
				if _, err := Fit(context.Background(), src, Config{K: 3, Windows: true, Seed: 1}); err != nil {
					t.Error(err)
				}
			})
		}
		slices.Sort(p[:])
		return p[1]
	}
	small, large := peak(5000), peak(20000)
	t.Logf("peak heap %.2f MB at 50000 rows, %.2f MB at 200000", float64(small)/1e6, float64(large)/1e6)
	if large > small+2<<20 {
		t.Errorf("peak heap grew from %.2f MB to %.2f MB for 4× the rows (limit +2 MB)", float64(small)/1e6, float64(large)/1e6)
	}
}
