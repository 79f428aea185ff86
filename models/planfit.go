package models

import (
	"context"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// FitPlan runs the passes of p over src and fits the model from the
// statistics of the last pass with fit and the settings cfg
// (implicit.FitPlan), then records in *seconds(m) the wall time of the
// whole fit, from start.
func FitPlan[M, C any](ctx context.Context, src stream.DenseSource, p implicit.Planner, workers int, cfg C, fit func(context.Context, *implicit.DenseStats, C) (M, error), start time.Time, seconds func(M) *float64) (M, error) {
	m, err := implicit.FitPlan(ctx, src, p, workers, func(ctx context.Context, st *implicit.DenseStats) (M, error) {
		return fit(ctx, st, cfg)
	})
	if err != nil {
		var none M
		return none, err
	}
	*seconds(m) = time.Since(start).Seconds()
	return m, nil
}
