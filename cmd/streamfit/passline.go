package main

import (
	"fmt"
	"math"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// passLine prints on stderr, always, the line of a fit's pass that ended:
// its number and stage, its time, the n units it read and their rate,
// the time of the whole fit (elapsed) and what the pass measured (tail),
// clearing p's progress line first when it is drawn in place. A log of a
// batch job then shows how the fit went.
func (e *env) passLine(p *stream.Progress, model string, pass int, stage string, took, elapsed time.Duration, n int64, unit, tail string) {
	clear := ""
	if p != nil && e.terminal() {
		clear = "\r\033[K"
	}
	rate := ""
	if s := took.Seconds(); s > 0 && n > 0 {
		rate = fmt.Sprintf(", %d %s, %.0f/s", n, unit, float64(n)/s)
	}
	e.printf("%sfit %s: pass %d (%s) done in %.1fs%s (%.1fs in all)%s\n", clear, model, pass, stage, took.Seconds(), rate, elapsed.Seconds(), tail)
}

// densePassLog is the log of the likelihood passes of a fit of dense rows
// started at start (models.WithPassLog): a passLine each, with the
// log-likelihood per row of the model the pass started from.
func (e *env) densePassLog(p *stream.Progress, model string, start time.Time) func(models.PassDone) {
	return func(d models.PassDone) {
		tail := ""
		if !math.IsNaN(d.LogLik) {
			tail = fmt.Sprintf("; log-likelihood %.5f per row", d.LogLik)
		}
		p.SetStage(fmt.Sprintf("pass %d (%s)%s", d.Pass, d.Stage, tail))
		e.passLine(p, model, d.Pass, d.Stage, d.Took, time.Since(start), d.Rows, "rows", tail)
		p.StartPass() // the next pass's line counts its own rows
	}
}
