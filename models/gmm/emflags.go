package gmm

import (
	"flag"
	"fmt"

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

// covarianceFlag binds --covariance to c.EM.Diag (emFlags first).
func covarianceFlag(fs *flag.FlagSet, c *Config) {
	models.CovarianceFlag(fs, "spherical (default): a variance per component; diag: a variance per component and feature (scikit-learn's covariance_type=\"diag\"), fitted by the EM passes", func(diag bool) { c.EM.Diag = diag })
}

// checkCovariance refuses --covariance diag where no EM pass runs: the
// moment fit is spherical, so a diagonal mixture would silently be
// another model.
func checkCovariance(c *Config, ck models.Check) error {
	switch {
	case c.EM == nil || !c.EM.Diag:
		return nil
	case ck.NoRows():
		return fmt.Errorf("--covariance diag: a fit from merged statistics (--from-stats, a pipeline's) without the rows is the moment fit, which is spherical; give the rows with --input for a diagonal mixture, or give --covariance spherical")
	case c.EM.Passes == 0:
		return fmt.Errorf("--covariance diag with --em-passes 0: the moment fit is spherical, and the diagonal variances are fitted by the EM passes; give --em-passes N > 0 (default %d), or --covariance spherical for the moment fit alone", DefaultEMPasses)
	}
	return nil
}
