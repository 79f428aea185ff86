package gmm

import (
	"flag"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// emFlags binds the EM passes' flags of a fit to c.EM, at the defaults of
// DefaultConfig.
func emFlags(fs *flag.FlagSet, c *Config) {
	c.EM = &EMConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}
	fs.IntVar(&c.EM.Passes, "em-passes", DefaultEMPasses, "cap on the EM passes over --input that refine the moment fit by likelihood, from a start that also places the components the moments do not give (k > d) at sample rows (0: the pure moment fit)")
	fs.Float64Var(&c.EM.Tol, "em-tol", DefaultEMTol, "stop the EM passes when one raised the average log-likelihood per row by less than this (> 0)")
}

// checkEM checks the EM flags once parsed, and leaves c.EM nil for the
// moment fit alone (--em-passes 0, or a fit from statistics, which has no
// rows for the passes).
func checkEM(c *Config, ck models.Check) error {
	e := c.EM
	if e == nil {
		return nil
	}
	switch {
	case e.Passes < 0:
		return fmt.Errorf("--em-passes=%d: want 0 (the moment fit) or more", e.Passes)
	case !(e.Tol > 0) || math.IsInf(e.Tol, 0):
		return fmt.Errorf("--em-tol=%g: want a finite tolerance > 0", e.Tol)
	case ck.FromStats && ck.Has("em-passes") && e.Passes > 0:
		return fmt.Errorf("--em-passes: a fit from merged statistics (--from-stats, a pipeline's) has no rows for the EM passes: fit from --input, or give --em-passes 0")
	}
	if e.Passes == 0 || ck.FromStats {
		c.EM = nil
	}
	return nil
}

// emSummary is what Summary adds for the EM passes of a fit.
func emSummary(e *EMRun) string {
	s := fmt.Sprintf(", then %d EM passes", e.Passes)
	if n := len(e.LogLik); n > 0 {
		s += fmt.Sprintf(" (log-likelihood %.5g per row", e.LogLik[n-1])
		if !e.Converged {
			s += ", stopped at the cap"
		}
		s += ")"
	}
	return s
}
