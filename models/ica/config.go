package ica

import (
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// Config sets up a fit. The zero value plus K is a valid configuration.
type Config struct {
	// K is the number of sources; the method needs 1 ≤ K ≤ d.
	K int
	// ExactDim is the largest d for which the d×d covariance is formed
	// (default 512); above it a randomized sketch of rank K+Oversample is used.
	ExactDim int
	// Oversample and PowerIters tune the sketch (defaults 10 and 2).
	Oversample, PowerIters int
	// Solver names the symmetric third-order solver (solver.ByName; default "rtpm").
	Solver string
	// Restarts and Iters tune the solver (0 selects its defaults).
	Restarts, Iters int
	// Contrast is what the polishing steps after the solver maximise:
	// "logcosh" (the default) or "kurtosis". Both start from the
	// cumulant's answer. "kurtosis" takes fourth-order power steps, the
	// fixed point of the cumulant itself; "logcosh" takes the fixed-point
	// steps of the contrast E[log cosh(θᵀz)] (g = tanh), whose estimate has
	// a smaller variance on heavy-tailed sources such as speech, where a
	// fourth moment is dominated by a few large values.
	Contrast string
	// Refine caps the polishing steps, one pass over the rows each
	// (default 2 with "kurtosis": they converge cubically, the first does
	// most of the work and the second moves the columns by about 10⁻³;
	// DefaultLogcoshSteps with "logcosh", which converges more slowly;
	// negative: none, and one pass for the kurtoses).
	Refine int
	// Seed fixes every random choice (the contraction vector and the solver).
	Seed uint64
	// Workers is the number of goroutines per pass (default 1).
	Workers int
}

func (c *Config) defaults() {
	models.WhiteningDefaults(&c.ExactDim, &c.Oversample, &c.PowerIters)
	models.SolverDefaults(&c.Solver, &c.Workers)
	if c.Contrast == "" {
		c.Contrast = ContrastLogcosh
	}
	if c.Refine == 0 {
		c.Refine = 2
		if c.Contrast == ContrastLogcosh {
			c.Refine = DefaultLogcoshSteps
		}
	}
}

func (c *Config) check(d int) error {
	switch {
	case c.K < 1:
		return fmt.Errorf("ica: k=%d, need at least one source", c.K)
	case c.Contrast != ContrastLogcosh && c.Contrast != ContrastKurtosis:
		return fmt.Errorf("ica: contrast %q: want %q or %q", c.Contrast, ContrastLogcosh, ContrastKurtosis)
	case c.K > d:
		return fmt.Errorf("ica: k=%d exceeds the dimension d=%d; the moment method needs k ≤ d", c.K, d)
	}
	return nil
}

// The contrasts of Config.Contrast.
const (
	ContrastLogcosh  = "logcosh"
	ContrastKurtosis = "kurtosis"
)

// DefaultLogcoshSteps caps the logcosh polishing steps by default. They
// converge linearly near the answer: from the cumulant's answer 3–8 steps
// reach the tolerance on generated sources and speech mixtures, and a
// poorer start (a solver's answer far off) takes more.
const DefaultLogcoshSteps = 20
