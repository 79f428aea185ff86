package markov

import "github.com/streamfit/streamfit/models"

// Config sets up a fit from snapshots.
type Config struct {
	// K is the number of hidden states (HMM only; a chain has k = d states).
	// The moments give at most d states; when they give fewer than K, the
	// fit gives as many as they do and copies of them (see FitHMM).
	K int
	// Alpha0 is the Dirichlet concentration α₀ of the per-set start
	// distributions (default 1); the method needs it known.
	Alpha0 float64
	// R is the parameter of the Geometric(r) times; 0 finds it by the
	// projection-distance scan (001 §3.1).
	R float64
	// ScanStep is the r grid step of the scan (default 0.01).
	ScanStep float64
	// Sigma2, when positive, is the known HMM noise variance.
	Sigma2 float64
	// Discrete says the HMM's rows are one-hot symbols (checked), not
	// real vectors with spherical noise: the fit then gives UT, the
	// smoothed emissions and P = I, all that such snapshots determine
	// (see FitHMM).
	Discrete bool
	// Solver names the symmetric tensor decomposition (solver.ByName;
	// default "rtpm").
	Solver string
	// Restarts and Iters tune the solver (0: solver defaults).
	Restarts, Iters int
	// Seed fixes every random choice.
	Seed uint64
	// Workers is the number of goroutines per pass (default 1).
	Workers int
}

func (c *Config) defaults() {
	if c.Alpha0 == 0 {
		c.Alpha0 = 1
	}
	if c.ScanStep == 0 {
		c.ScanStep = 0.01
	}
	models.SolverDefaults(&c.Solver, &c.Workers)
}
