package lda

import "testing"

// TestRestartsFor checks the starts per topic each solver is given: RTPM's
// default max(20, k) capped at rtpmStarts, the user's value whenever set,
// and 0 (the solver's own default) for the other solvers.
func TestRestartsFor(t *testing.T) {
	for _, c := range []struct {
		k, restarts int
		solver      string
		want        int
	}{
		{10, 0, "rtpm", 20},
		{25, 0, "rtpm", 25},
		{100, 0, "rtpm", rtpmStarts},
		{100, 100, "rtpm", 100},
		{100, 0, "simultaneous", 0},
		{100, 7, "ojd", 7},
	} {
		cfg := Config{K: c.k, Restarts: c.restarts}
		if got := cfg.restartsFor(c.solver); got != c.want {
			t.Errorf("k=%d Restarts=%d solver %s: %d starts, want %d", c.k, c.restarts, c.solver, got, c.want)
		}
	}
}

// TestSolverFor checks the default solver of each representation: joint
// diagonalisation for the explicit tensor of a pure spectral fit (with the
// plug-in stage up to ojdPlugInMaxK topics), the simultaneous power
// method for the explicit tensor when EM passes follow and for the costly
// contractions of the sketch and the rows on disk; the user's always.
func TestSolverFor(t *testing.T) {
	for _, c := range []struct {
		third  Third
		k, em  int
		solver string
		want   string
	}{
		{Explicit, 10, 0, "", "ojd"},
		{Explicit, ojdPlugInMaxK, 0, "", "ojd"},
		{Explicit, ojdPlugInMaxK + 1, 0, "", "ojd0"},
		{Explicit, jdMaxK, 0, "", "ojd0"},
		{Explicit, jdMaxK + 1, 0, "", "rtpm"},
		{Explicit, 10, 5, "", "simultaneous"},
		{Sketch, 10, 0, "", "simultaneous"},
		{Rows, 100, 5, "", "simultaneous"},
		{Explicit, 10, 5, "rtpm", "rtpm"},
		{Explicit, 100, 0, "rtpm", "rtpm"},
		{Sketch, 10, 0, "ojd", "ojd"},
	} {
		cfg := Config{K: c.k, Solver: c.solver, EM: EM{Passes: c.em}}
		if got := cfg.solverFor(c.third); got != c.want {
			t.Errorf("%s, k=%d, EM passes %d, solver %q: %s, want %s", c.third, c.k, c.em, c.solver, got, c.want)
		}
	}
}
