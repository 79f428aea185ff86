package solver

import "errors"

// Sentinel errors; solvers wrap them with the numbers that explain the failure,
// so callers test with errors.Is.
var (
	// ErrRank reports a requested rank the method cannot deliver (k < 1, k > Dim
	// for whitened or joint-diagonalisation methods).
	ErrRank = errors.New("solver: bad rank")
	// ErrNonPositive reports a component with a non-positive or non-finite
	// eigenvalue: usually the tensor supports fewer components than requested.
	ErrNonPositive = errors.New("solver: non-positive eigenvalue")
	// ErrDegenerate reports input the method cannot separate: repeated weights
	// in every projection, rank-deficient projections, a singular factor matrix.
	ErrDegenerate = errors.New("solver: degenerate input")
	// ErrNoConvergence reports that an iteration hit its cap without meeting
	// its tolerance and no fallback applied.
	ErrNoConvergence = errors.New("solver: did not converge")
	// ErrUnknownSolver is returned by ByName for a name not in Names().
	ErrUnknownSolver = errors.New("solver: unknown solver")
)
