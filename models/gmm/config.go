package gmm

import (
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// Config sets up a fit. The zero value plus K is a common-variance fit with
// the default solver settings.
type Config struct {
	// K is the number of components; the method needs 1 ≤ K ≤ d.
	K int
	// Differing fits a variance per component (004 Thm 3.3) instead of a common σ².
	Differing bool
	// Sigma2, when positive, is a known common noise variance; it skips the
	// estimate (common-variance fits only).
	Sigma2 float64
	// SigmaMin estimates σ² as the smallest eigenvalue of the covariance, as the
	// paper states, on the exact path. The default averages the d−k+1 smallest
	// eigenvalues (the same quantity in the population, with far less
	// finite-sample bias) and is the only choice on the sketched path.
	SigmaMin bool
	// ExactDim is the largest d for which the d×d second moment is formed
	// (default 512); above it a randomized sketch of rank K+Oversample is used.
	ExactDim int
	// Oversample and PowerIters tune the sketch (defaults 10 and 2).
	Oversample, PowerIters int
	// Solver names the symmetric tensor decomposition (solver.ByName;
	// default "rtpm", the robust tensor power method).
	Solver string
	// Restarts (L) and Iters (N) tune the solver (0 selects its defaults).
	Restarts, Iters int
	// Seed fixes every random choice; the same seed and data give the same model.
	Seed uint64
	// Workers is the number of goroutines per pass (default 1). Results are
	// identical for a given value, and agree to rounding across values.
	Workers int
	// EM, when set, refines the moment fit by streamed EM passes over the
	// rows (Start, then Refine; its Seed and Workers are the Config's),
	// and the model has a variance per component (per component and
	// feature with EM.Diag: a diagonal mixture). The moment fit is then
	// only the start, with a variance per component whatever Differing
	// (unless Sigma2 is given): a K above d, or above the
	// directions the moments resolve, starts the components they do not
	// give at sample rows, with a warning, instead of failing. nil: the
	// moment fit alone. DefaultConfig sets it.
	EM *EMConfig

	// atDim fits k above the dimension d at d components instead of
	// refusing it: the moment passes of a pipeline's EM start, which
	// starts the other components at sample rows (emRefinement).
	atDim bool
}

// DefaultEMPasses and DefaultEMTol are the EM passes' cap and stopping
// gain (per row, of the average log-likelihood) of the default fit
// (DefaultConfig, `streamfit fit gmm`): scikit-learn's max_iter and tol,
// the settings of bench/dense/RESULTS.md.
const (
	DefaultEMPasses = 100
	DefaultEMTol    = 1e-3
)

// DefaultConfig is the configuration of the command line's default fit of
// k components: seed 1, the moment fit refined by up to DefaultEMPasses
// EM passes. Set EM to nil for the moment fit alone.
func DefaultConfig(k int) Config {
	return Config{K: k, Seed: 1, EM: &EMConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}}
}

func (c *Config) defaults() {
	models.WhiteningDefaults(&c.ExactDim, &c.Oversample, &c.PowerIters)
	models.SolverDefaults(&c.Solver, &c.Workers)
}

func (c *Config) check(d int) error {
	switch {
	case c.K < 1:
		return fmt.Errorf("gmm: k=%d, need at least one component", c.K)
	case d > 0 && c.K > d:
		return fmt.Errorf("gmm: k=%d exceeds the dimension d=%d; the moment method needs k ≤ d", c.K, d)
	case c.Sigma2 < 0:
		return fmt.Errorf("gmm: sigma2=%g is negative", c.Sigma2)
	case c.Sigma2 > 0 && c.Differing:
		return fmt.Errorf("gmm: a known sigma2 applies to the common-variance model only")
	}
	return nil
}
