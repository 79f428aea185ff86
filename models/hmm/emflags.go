package hmm

import (
	"flag"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// emFlags binds the Baum–Welch passes' flags of a fit to c.EM, at the
// defaults of DefaultConfig.
func emFlags(fs *flag.FlagSet, c *Config) {
	c.EM = &BWConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}
	fs.IntVar(&c.EM.Passes, "em-passes", DefaultEMPasses, "with --discrete: cap on the Baum–Welch (EM) passes over the sequences of --input that refine the moment fit by likelihood (0: the pure moment fit; observations that are not one-hot get the moment fit alone)")
	fs.Float64Var(&c.EM.Tol, "em-tol", DefaultEMTol, "stop the Baum–Welch passes when one raised the log-likelihood per row by less than this (> 0)")
}

// checkEM checks the Baum–Welch flags once parsed, and leaves c.EM nil
// for the moment fit alone: --em-passes 0, observations that are not
// one-hot, or a fit from statistics (no sequences to pass over).
func checkEM(c *Config, ck models.Check) error {
	e := c.EM
	if e == nil {
		return nil
	}
	asked := ck.Has("em-passes") && e.Passes > 0
	switch {
	case e.Passes < 0:
		return fmt.Errorf("--em-passes=%d: want 0 (the moment fit) or more", e.Passes)
	case !(e.Tol > 0) || math.IsInf(e.Tol, 0):
		return fmt.Errorf("--em-tol=%g: want a finite tolerance > 0", e.Tol)
	case asked && ck.FromStats:
		return fmt.Errorf("--em-passes: a fit from merged statistics (--from-stats, a pipeline's) has no sequences for the Baum–Welch passes: fit from --input, or give --em-passes 0")
	case asked && !c.Discrete:
		return fmt.Errorf("--em-passes: the Baum–Welch passes are for one-hot observations (--discrete); give --em-passes 0 or --discrete")
	}
	if e.Passes == 0 || ck.FromStats || !c.Discrete {
		c.EM = nil
	}
	return nil
}

// emSummary is what Summary adds for the Baum–Welch passes of the fit f.
func emSummary(f *FitRecord) string {
	if f == nil || f.EM == nil {
		return ""
	}
	e := f.EM
	s := fmt.Sprintf(", then %d Baum–Welch passes", e.Passes)
	if n := len(e.LogLik); n > 0 {
		s += fmt.Sprintf(" (log-likelihood %.5g per row", e.LogLik[n-1])
		if !e.Converged {
			s += ", stopped at the cap"
		}
		s += ")"
	}
	return s
}
