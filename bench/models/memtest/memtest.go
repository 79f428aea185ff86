// Package memtest checks, for the model packages' tests, that a fit's peak
// heap does not grow with the number of rows it reads (the streaming
// contract of DESIGN.md): the same fit at n and at 4n rows must peak within a
// fixed slack of each other.
package memtest

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"
)

// PeakHeap runs f while sampling the heap every millisecond and returns the
// largest sample above the level before f started. The garbage collector
// runs at GOGC=10 meanwhile, so the samples follow the live heap closely
// rather than the default's up to 4 MB (or 100%) of uncollected garbage.
func PeakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
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

// Median3 is the median of three PeakHeap runs of f (GC timing makes single
// samples noisy).
func Median3(f func()) uint64 {
	var p [3]uint64
	for i := range p {
		p[i] = PeakHeap(f)
	}
	slices.Sort(p[:])
	return p[1]
}

// Check runs fit(n) and fit(4n) and fails t when the larger peaks more than
// slack bytes above the smaller. It skips under -short.
func Check(t *testing.T, n int64, slack uint64, fit func(rows int64) error) {
	t.Helper()
	if testing.Short() {
		t.Skip("fits twice at two sizes")
	}
	peak := func(rows int64) uint64 {
		return Median3(func() {
			if err := fit(rows); err != nil {
				t.Error(err)
			}
		})
	}
	small, large := peak(n), peak(4*n)
	t.Logf("peak heap %.2f MB at n=%d, %.2f MB at 4n", float64(small)/1e6, n, float64(large)/1e6)
	if large > small+slack {
		t.Errorf("peak heap grew from %.2f MB to %.2f MB for 4× the rows (limit +%.1f MB)", float64(small)/1e6, float64(large)/1e6, float64(slack)/1e6)
	}
}
