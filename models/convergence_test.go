package models

import (
	"strings"
	"testing"

	"github.com/streamfit/streamfit/solver"
)

// A fit converged only when every decomposition did; each one that did not
// leaves a warning naming it and carrying the solver's reason.
func TestConvergenceRecord(t *testing.T) {
	var c Convergence
	c.Record("the point tensor", &solver.Result{Converged: true})
	if !c.Converged || len(c.Warnings) != 0 {
		t.Fatalf("after a converged solve: %+v", c)
	}
	c.Record("the set tensor", &solver.Result{Converged: false, Reason: "phase 2 hit its cap"})
	c.Record("", &solver.Result{Converged: true})
	if c.Converged {
		t.Errorf("one of three solves did not converge, but Converged is true")
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "the set tensor") || !strings.Contains(c.Warnings[0], "phase 2 hit its cap") {
		t.Errorf("warnings %q: want one naming the set tensor and the reason", c.Warnings)
	}
}
