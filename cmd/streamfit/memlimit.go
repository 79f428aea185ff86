package main

import (
	"math"
	"runtime/debug"
	"sync"

	"github.com/streamfit/streamfit/models/lda"
)

// planLimit sets the runtime's soft memory limit to the fit's predicted
// peak when nobody else set one (GOMEMLIMIT, --memory). Without a limit the
// heap grows to twice its live data before a collection, and a fit's
// arrays are large and short-lived: on the Go source tree at k=50 the
// limit took the peak RSS from 381–404 MB to 306–309 MB at the same CPU
// (bench/real/RESULTS.md, "Peak memory"). The prediction already
// allows the collector 1.6 times the live statistics (lda's gcSlack), so
// the limit binds only where the heap would have grown past what the plan
// promised; it is soft, so a fit that needs more still gets it.
type planLimit struct {
	once  sync.Once
	ours  bool  // the limit in force is one planLimit set
	limit int64 // the largest prediction seen (a revised plan may add a pass)
}

// onPlan raises the limit to p's predicted peak, if the limit is planLimit's
// to set.
func (l *planLimit) onPlan(p *lda.Plan) {
	l.once.Do(func() { l.ours = debug.SetMemoryLimit(-1) == math.MaxInt64 })
	if !l.ours || p.Predicted.PeakBytes <= l.limit {
		return
	}
	l.limit = p.Predicted.PeakBytes
	debug.SetMemoryLimit(l.limit)
}
