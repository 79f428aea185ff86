package gmm

import (
	"flag"

	"github.com/streamfit/streamfit/models"
)

// emFlags binds the EM passes' flags of a fit to c.EM, at the defaults of
// DefaultConfig.
func emFlags(fs *flag.FlagSet, c *Config) {
	c.EM = &EMConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}
	models.LikelihoodFlags(fs, &c.EM.Passes, &c.EM.Tol,
		"cap on the EM passes over --input that refine the moment fit by likelihood, from a start that also places the components the moments do not give (k > d) at sample rows (0: the pure moment fit)",
		"stop the EM passes when one raised the average log-likelihood per row by less than this (> 0)")
}

// checkEM checks the EM flags once parsed, and leaves c.EM nil for the
// moment fit alone (--em-passes 0, or a fit from statistics, which has no
// rows for the passes).
func checkEM(c *Config, ck models.Check) error {
	if c.EM == nil {
		return nil
	}
	run, err := models.CheckLikelihood(c.EM.Passes, c.EM.Tol, ck, "EM", "rows")
	if !run {
		c.EM = nil
	}
	return err
}

// emSummary is what Summary adds for the EM passes of a fit.
func emSummary(e *EMRun) string {
	return models.LikelihoodSummary("EM", e.Passes, e.LogLik, e.Converged)
}
