package models

import (
	"context"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// PassDone describes a pass of a likelihood refinement that ended (the EM
// passes of a Gaussian mixture, Baum–Welch's of an HMM): what a caller
// logs, one line per pass, as the command line does.
type PassDone struct {
	// Pass counts the refinement's passes from 1; Stage names them ("em").
	Pass  int
	Stage string
	// Rows is the number of rows the pass read, Took its wall time.
	Rows int64
	Took time.Duration
	// LogLik is the average log-likelihood per row of the model the pass
	// started from.
	LogLik float64
}

type passLogKey struct{}

// WithPassLog returns ctx carrying log, which the refinements of the
// models call after each pass (LogPass).
func WithPassLog(ctx context.Context, log func(PassDone)) context.Context {
	return context.WithValue(ctx, passLogKey{}, log)
}

// LogPass hands p to the log ctx carries (WithPassLog), if any.
func LogPass(ctx context.Context, p PassDone) {
	if log, ok := ctx.Value(passLogKey{}).(func(PassDone)); ok && log != nil {
		log(p)
	}
}

// Refinement is a model's likelihood refinement (the EM passes of a
// Gaussian mixture, Baum–Welch's of an HMM) cut at its passes, for a
// pipeline that runs each pass as a stage over shards of the rows: the
// moment fit it starts from, then passes whose statistics add up exactly
// (implicit.DenseStats, merged as any pass's), each ended by an M step.
// Between the stages its state is bytes: the model so far and the record
// of the passes, the same in every process. The functions are those of the
// model's own fit from rows, so the model is the one it fits.
type Refinement interface {
	// Moments are the passes of the moment fit the refinement starts from.
	Moments() Passes
	// Cap is the most passes the refinement takes.
	Cap() int
	// Start returns the state before the first pass, from the merged
	// statistics st of the moment fit's last pass; rows are all the rows
	// of the fit in order, for a start that samples them (read only then).
	Start(ctx context.Context, st *implicit.DenseStats, rows stream.DenseSource) ([]byte, error)
	// Pass returns the next pass after state (its statistics over the rows
	// of the input path), or nil once the passes have ended.
	Pass(state []byte, path string) (*implicit.Pass, error)
	// Step returns the state after the pass whose merged statistics are
	// st: the M step and the stopping rule.
	Step(state []byte, st *implicit.DenseStats) ([]byte, error)
	// Model returns the fitted model of state.
	Model(state []byte) (Fitted, error)
}

// refinements are the registered refinements (RegisterRefinement), each
// returning the one of a kind's settings, or false for another kind's.
var refinements []func(DenseSettings, Common) (Refinement, bool)

// RegisterRefinement registers the refinement of the fits of kind k: of
// returns the refinement that a fit with the settings c runs, or nil when
// they ask for none (the moment fit alone).
func RegisterRefinement[C any, M Fitted](k *DenseKind[C, M], of func(c C) Refinement) {
	refinements = append(refinements, func(s DenseSettings, c Common) (Refinement, bool) {
		ds, ok := s.(*denseSettings[C, M])
		if !ok || ds.kind != k {
			return nil, false
		}
		return of(ds.config(c)), true
	})
}

// RefinementOf returns the likelihood refinement that a fit with the
// settings s and c runs after its moment fit, or nil when it runs none.
func RefinementOf(s DenseSettings, c Common) Refinement {
	for _, f := range refinements {
		if r, ok := f(s, c); ok {
			return r
		}
	}
	return nil
}
