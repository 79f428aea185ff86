package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/streamfit/streamfit/models/lda"
)

func planPeak(b int64) *lda.Plan {
	return &lda.Plan{Predicted: lda.Cost{PeakBytes: b}}
}

// TestPlanLimit: without a limit the fit's predicted peak becomes the
// runtime's soft limit, a revised plan can only raise it, and a limit
// someone else set (GOMEMLIMIT, --memory) is left alone.
func TestPlanLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)

	var l planLimit
	l.onPlan(planPeak(300 << 20))
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d after a plan of 300 MiB, want %d", got, 300<<20)
	}
	l.onPlan(planPeak(200 << 20))
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("a smaller revised plan lowered the limit to %d", got)
	}
	l.onPlan(planPeak(400 << 20))
	if got := debug.SetMemoryLimit(-1); got != 400<<20 {
		t.Errorf("limit %d after a revised plan of 400 MiB, want %d", got, 400<<20)
	}

	debug.SetMemoryLimit(1 << 30) // as GOMEMLIMIT or --memory would
	var other planLimit
	other.onPlan(planPeak(300 << 20))
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("a limit set before the plan became %d", got)
	}
}
