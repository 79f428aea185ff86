package hmm

import (
	"flag"
	"fmt"
	"strings"

	"github.com/streamfit/streamfit/models"
)

// emFlags binds the Baum–Welch passes' flags of a fit to c.EM, at the
// defaults of DefaultConfig.
func emFlags(fs *flag.FlagSet, c *Config) {
	c.EM = &BWConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}
	models.LikelihoodFlags(fs, &c.EM.Passes, &c.EM.Tol,
		"cap on the Baum–Welch (EM) passes over the sequences of --input that refine the moment fit by likelihood (0: the pure moment fit): of one-hot symbols with --discrete, else of a Gaussian per state, N(x; mean, variance·I), whose variances a first pass starts and the model records",
		"stop the Baum–Welch passes when one raised the log-likelihood per row by less than this (> 0)")
	fs.Func("em-memory", "with --discrete: the passes after the first read the sequences from memory, a byte per row up to 256 symbols, when they fit this budget (e.g. 64M; default 256M); above it, and with 0, every pass reads --input", func(v string) error {
		if strings.TrimSpace(v) == "0" {
			c.EM.Memory = -1
			return nil
		}
		n, err := models.ParseBytes(v)
		c.EM.Memory = n
		return err
	})
}

// checkEM checks the Baum–Welch flags once parsed, and leaves c.EM nil
// for the moment fit alone: --em-passes 0, or a fit from statistics (no
// sequences to pass over).
func checkEM(c *Config, ck models.Check) error {
	if c.EM == nil {
		return nil
	}
	run, err := models.CheckLikelihood(c.EM.Passes, c.EM.Tol, ck, "Baum–Welch", "sequences")
	if !run {
		c.EM = nil
	}
	return err
}

// emSummary is what Summary adds for the Baum–Welch passes of the fit f.
func emSummary(f *FitRecord) string {
	if f == nil || f.EM == nil {
		return ""
	}
	return models.LikelihoodSummary("Baum–Welch", f.EM.Passes, f.EM.LogLik, f.EM.Converged)
}

// covarianceFlag binds --covariance to c.EM.Diag (emFlags first).
func covarianceFlag(fs *flag.FlagSet, c *Config) {
	models.CovarianceFlag(fs, "of Gaussian observations: spherical (default), a variance per state, N(x; mean, variance·I); diag, a variance per state and coordinate (pomegranate's and hmmlearn's diagonal Gaussian HMM), fitted by the Baum–Welch passes", func(diag bool) { c.EM.Diag = diag })
}

// checkCovariance refuses --covariance diag where no Baum–Welch pass of
// Gaussian states runs: the moment fit gives no variances, so the
// diagonal model would silently be another.
func checkCovariance(c *Config, ck models.Check) error {
	switch {
	case c.EM == nil || !c.EM.Diag:
		return nil
	case c.Discrete:
		return fmt.Errorf("--covariance diag with --discrete: one-hot symbols have no variances; --covariance is for Gaussian observations")
	case ck.NoRows():
		return fmt.Errorf("--covariance diag: a fit from merged statistics (--from-stats) without the rows is the moment fit, which gives no variances; give the rows with --input for diagonal Gaussian states, or give --covariance spherical")
	case c.EM.Passes == 0:
		return fmt.Errorf("--covariance diag with --em-passes 0: the moment fit gives no variances, and the diagonal ones are fitted by the Baum–Welch passes; give --em-passes N > 0 (default %d), or --covariance spherical for the moment fit alone", DefaultEMPasses)
	}
	return nil
}
