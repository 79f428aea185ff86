package cpuspeed

import (
	"testing"
	"time"
)

// TestProbeMeasuresItsWork checks that the probe times its work: half the
// work takes less time than all of it, and the factor is the probe's time
// against the reference, clamped.
func TestProbeMeasuresItsWork(t *testing.T) {
	full := Probe()
	w := newWork()
	half := time.Duration(1 << 62)
	for range 3 {
		t0 := time.Now()
		for range gemms / 2 {
			w.gemm()
		}
		w.x, w.idx = w.x[:scattered/2], w.idx[:scattered/2]
		w.scatter()
		half = min(half, time.Since(t0))
	}
	t.Logf("probe %v, half its work %v, factor %.3g", full, half, Factor())
	if full <= 0 || half >= full {
		t.Errorf("probe %v, half its work %v: want 0 < half < all", full, half)
	}
	if f := Factor(); !(f >= 1.0/8 && f <= 8) {
		t.Errorf("factor %v outside [1/8, 8]", f)
	}
}
