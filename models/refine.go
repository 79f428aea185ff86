package models

import (
	"context"
	"math"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// Refine runs the refinement r in one process from st, the merged
// statistics of its moment fit's last pass (Refinement.Moments), over the
// rows of src: Start, then each pass over src and its M step until r has
// no more passes. path names src in r's errors. The model is the one the
// fit of the same settings gives over src, since the moment passes over
// src give st bit for bit (for the statistics of shards cut where src's
// batches are); it returns it with the number of passes after Start. Each
// pass is handed to the log ctx carries (WithPassLog) with its rows and
// time (the log-likelihood, which r's state holds, as NaN).
func Refine(ctx context.Context, r Refinement, st *implicit.DenseStats, src stream.DenseSource, path string, workers int) (Fitted, int, error) {
	state, err := r.Start(ctx, st, src)
	if err != nil {
		return nil, 0, err
	}
	passes := 0
	for {
		p, err := r.Pass(state, path)
		if err != nil {
			return nil, passes, err
		}
		if p == nil {
			break
		}
		t0 := time.Now()
		sums, err := p.Run(ctx, src.Rows, workers)
		if err != nil {
			return nil, passes, err
		}
		if state, err = r.Step(state, sums); err != nil {
			return nil, passes, err
		}
		passes++
		LogPass(ctx, PassDone{Pass: passes, Stage: "em", Rows: sums.Rows, Took: time.Since(t0), LogLik: math.NaN()})
	}
	m, err := r.Model(state)
	return m, passes, err
}
