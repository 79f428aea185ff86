package models

import (
	"flag"
	"fmt"
	"math"
)

// The flags of the likelihood passes (EM, Baum–Welch) that refine a dense
// model's moment fit: --em-passes caps them (0: the moment fit alone) and
// --em-tol stops them when a pass gains less per row.

// LikelihoodFlags binds --em-passes and --em-tol to passes and tol, at
// their current values, with the model's own help texts.
func LikelihoodFlags(fs *flag.FlagSet, passes *int, tol *float64, passesHelp, tolHelp string) {
	fs.IntVar(passes, "em-passes", *passes, passesHelp)
	fs.Float64Var(tol, "em-tol", *tol, tolHelp)
}

// CheckLikelihood checks --em-passes and --em-tol once parsed and reports
// whether the passes run: not with 0 of them, nor in a fit from merged
// statistics, which has no data to pass over (an explicit --em-passes N
// is refused there). what names the passes ("EM"), data what they read
// ("rows").
func CheckLikelihood(passes int, tol float64, ck Check, what, data string) (bool, error) {
	switch {
	case passes < 0:
		return false, fmt.Errorf("--em-passes=%d: want 0 (the moment fit) or more", passes)
	case !(tol > 0) || math.IsInf(tol, 0):
		return false, fmt.Errorf("--em-tol=%g: want a finite tolerance > 0", tol)
	case ck.NoRows() && ck.Has("em-passes") && passes > 0:
		return false, fmt.Errorf("--em-passes: a fit from merged statistics (--from-stats, a pipeline's) has no %s for the %s passes: give them with --input, or give --em-passes 0", data, what)
	}
	return passes > 0 && !ck.NoRows(), nil
}

// LikelihoodSummary is what a fit's summary adds for its likelihood
// passes: how many, and the last log-likelihood per row.
func LikelihoodSummary(what string, passes int, logLik []float64, converged bool) string {
	s := fmt.Sprintf(", then %d %s passes", passes, what)
	if n := len(logLik); n > 0 {
		s += fmt.Sprintf(" (log-likelihood %.5g per row", logLik[n-1])
		if !converged {
			s += ", stopped at the cap"
		}
		s += ")"
	}
	return s
}

// CovarianceFlag registers --covariance (spherical or diag) on fs with
// help, calling set with whether diag was given: the likelihood passes'
// choice of a variance per component (spherical) or per component and
// feature (diag), the same flag for every model that has one.
func CovarianceFlag(fs *flag.FlagSet, help string, set func(diag bool)) {
	fs.Func("covariance", help, func(s string) error {
		switch s {
		case "spherical", "diag":
			set(s == "diag")
			return nil
		}
		return fmt.Errorf("want spherical or diag")
	})
}
