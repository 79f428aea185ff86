package lda

import (
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream"
)

// A plan whose predicted peak is more than the machine's memory is refused
// before any pass, naming an inferred vocabulary as the likely cause; one
// that fits is not.
func TestPlanMachineFits(t *testing.T) {
	total := sysinfo.PhysicalMemory()
	if total <= 0 {
		t.Skip("physical memory unknown on this platform")
	}
	p := &Plan{K: 10, D: 2000000001, Third: Explicit, Predicted: Cost{PeakBytes: 2 * total}}
	err := p.machineFits(stream.Info{})
	if err == nil || !strings.Contains(err.Error(), "nothing fits") || !strings.Contains(err.Error(), "largest term id") {
		t.Fatalf("a plan of twice the memory without a vocabulary: %v", err)
	}
	if err := p.machineFits(stream.Info{Vocab: []string{"a"}}); err == nil || strings.Contains(err.Error(), "largest term id") {
		t.Fatalf("a plan of twice the memory with a vocabulary: %v", err)
	}
	p.Predicted.PeakBytes = total / 4
	if err := p.machineFits(stream.Info{}); err != nil {
		t.Fatalf("a plan of a quarter of the memory: %v", err)
	}
}
