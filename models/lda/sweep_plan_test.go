package lda

import (
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// TestPlanSweep: the sweep's plan holds each k's plan; its EM passes hold
// every model at once, so over a large vocabulary its peak exceeds each
// single fit's by about the smaller models' EM memory; starts of their own
// cost each k's spectral passes, the shared start only the largest k's,
// and neither is below the largest k's fit.
func TestPlanSweep(t *testing.T) {
	info := stream.Info{Rows: 2_000_000, NNZ: 60_000_000, Terms: 100_000}
	ks := []int{50, 100, 200}
	cfg := DefaultConfig(0)
	own, err := PlanSweep(info, ks, cfg, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := PlanSweep(info, ks, cfg, SweepOptions{SharedStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Plans) != 3 || own.Shared || !shared.Shared {
		t.Fatalf("plans %d, shared %v/%v", len(own.Plans), own.Shared, shared.Shared)
	}
	top := own.Plans[2].Predicted
	var single int64
	var emSmall float64
	for _, p := range own.Plans {
		single = max(single, p.Predicted.PeakBytes)
		if p.K < 200 {
			emSmall += p.Predicted.emModel
		}
	}
	t.Logf("own: CPU %.1fs, peak %s; shared: CPU %.1fs; k=200 alone: CPU %.1fs, peak %s; the smaller models' EM %s",
		own.CPUSeconds, bytesStr(own.PeakBytes), shared.CPUSeconds, top.CPUSeconds, bytesStr(top.PeakBytes), bytesStr(int64(emSmall)))
	if want := float64(top.PeakBytes) + gcSlack*emSmall; float64(own.PeakBytes) < 0.95*want {
		t.Errorf("peak %s, want about %s (k=200's and the other models' EM memory)", bytesStr(own.PeakBytes), bytesStr(int64(want)))
	}
	if !(own.CPUSeconds > shared.CPUSeconds && shared.CPUSeconds > top.CPUSeconds) {
		t.Errorf("CPU: own starts %.1fs, shared %.1fs, k=200 alone %.1fs; want decreasing", own.CPUSeconds, shared.CPUSeconds, top.CPUSeconds)
	}
	if own.Fits != (own.PeakBytes <= own.Memory) {
		t.Errorf("fits %v with peak %d and budget %d", own.Fits, own.PeakBytes, own.Memory)
	}
	if _, err := PlanSweep(info, []int{5, 5}, cfg, SweepOptions{}); err == nil {
		t.Error("a k listed twice: no error")
	}
}
