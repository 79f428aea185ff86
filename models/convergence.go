package models

import "github.com/streamfit/streamfit/solver"

// Convergence records whether the tensor decompositions of a fit converged.
// The dense models embed it in their statistics (its fields appear in the
// model file's "stats" block), and the command line prints its warnings on
// stderr. A decomposition that stops at its iteration cap still returns an
// answer, which the fit uses; the warning says so rather than failing.
type Convergence struct {
	// Converged is false when any decomposition of the fit stopped before
	// its tolerance or fell back to its best start (solver.Result.Warning).
	Converged bool `json:"converged"`
	// Warnings say, one line each, what did not converge and why.
	Warnings []string `json:"warnings,omitempty"`
}

// Record notes the result of one decomposition; what names it in the
// warning ("the set tensor", or "" when the fit makes only one).
func (c *Convergence) Record(what string, res *solver.Result) {
	if w := res.Warning(); w != "" {
		if what != "" {
			w = "the decomposition of " + what + ": " + w
		}
		c.Warnings = append(c.Warnings, w+" (its answer is used; more Iters, another Solver or a lower k may help)")
	}
	c.Converged = len(c.Warnings) == 0
}
