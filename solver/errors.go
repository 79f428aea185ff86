package solver

import (
	"errors"
	"fmt"
)

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

// whitenedRank checks that r components fit a whitened (orthogonally
// decomposable) tensor of dimension k, for the power methods.
func whitenedRank(name string, r, k int) error {
	if r < 1 || r > k {
		return fmt.Errorf("%s: %w: rank %d must be in [1, dim=%d] (whitened tensors have at most dim orthogonal components)", name, ErrRank, r, k)
	}
	return nil
}
