package models

import (
	"context"
	"time"
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
