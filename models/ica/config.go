package ica

import (
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// Config sets up a fit. The zero value plus K is a valid configuration.
type Config struct {
	// K is the number of sources. The method finds at most as many as
	// the covariance has directions above the noise level (at most d, the
	// dimension): for a larger K it fits that many, with a warning.
	K int
	// ExactDim is the largest d for which the d×d covariance is formed
	// (default 512); above it a randomized sketch of rank K+Oversample is used.
	ExactDim int
	// Oversample and PowerIters tune the sketch (defaults 10 and 2).
	Oversample, PowerIters int
	// Solver names the symmetric third-order solver (solver.ByName;
	// default DefaultSolver).
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

	// asked is the K a fit was asked for when the data support fewer
	// (the statistics of its later passes carry it; 0 otherwise).
	asked int
}

func (c *Config) defaults() {
	models.WhiteningDefaults(&c.ExactDim, &c.Oversample, &c.PowerIters)
	if c.Solver == "" {
		c.Solver = DefaultSolver
	}
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

func (c *Config) check() error {
	switch {
	case c.K < 1:
		return fmt.Errorf("ica: k=%d, need at least one source", c.K)
	case c.Contrast != ContrastLogcosh && c.Contrast != ContrastKurtosis:
		return fmt.Errorf("ica: contrast %q: want %q or %q", c.Contrast, ContrastLogcosh, ContrastKurtosis)
	}
	return nil
}

// DefaultSolver is ICA's tensor solver when Config.Solver is "". Its
// answer is only the start of the polishing steps, which do the rest:
// against the robust tensor power method it gave the same Amari index on
// speech mixtures and more non-Gaussian components on image patches (mean
// excess kurtosis 28.9 against 25.9 at k=16), at 0.3–0.7× the CPU at k=16
// and 32 and 0.05× at k=60 (bench/dense/RESULTS.md).
const DefaultSolver = "simultaneous"

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
