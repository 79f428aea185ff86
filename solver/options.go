package solver

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Options configures every solver. Zero values select the per-solver defaults
// documented on each solver function, so Options{Seed: s} is always valid.
type Options struct {
	// Restarts is the number of random starts: L per component for RTPM
	// (default max(20, k)), the cap on starts per component for RTPMStop
	// (default 100·k), the number of initialisations for Alt (default
	// max(50, 10·r) per round). Ignored by JD and ALS.
	Restarts int
	// Iters caps the iterations of one phase: power iterations (RTPM,
	// RTPMStop: 30; Alt: 100), Jacobi/QRJ1D sweeps per JD stage (OJD 100,
	// NOJD 1000), ALS sweeps (500).
	Iters int
	// Tol stops an iteration early: for RTPM/RTPMStop once the largest change
	// of a unit iterate is below it (default 1e-10); for JD once no rotation
	// sine or triangular step exceeds it (default 1e-10; NOJD also stops when
	// the off-diagonal energy stalls); for ALS once no unit factor moves more
	// (default 1e-10); for Alt once the summed squared change of a start is
	// below it (default 1e-8).
	Tol float64
	// Seed drives every random draw (math/rand/v2 PCG).
	Seed uint64
	// Projections is L0, the number of random projections of the first JD
	// stage. Default: OJD 5, 10, 20 for d < 100, < 200, ≥ 200 (the authors'
	// code); NOJD 2d (asymmetric JD: 2·d3).
	Projections int
	// Refine, when positive, runs that many CP-ALS sweeps on the result
	// (every solver in the registry honours it).
	Refine int
}

// Result is what every symmetric solver returns.
type Result struct {
	// Weights are the λ_i of T ≈ Σ_i λ_i v_i⊗v_i⊗v_i, in extraction order.
	Weights []float64
	// Factors holds the unit vectors v_i as columns (Dim × rank).
	Factors *mat.Dense
	// Iters is the total number of iterations (power steps summed over the
	// block, or sweeps) the solve took.
	Iters int
	// Restarts is the number of random starts used.
	Restarts int
	// Fallbacks counts components where a stopping rule never held and the
	// best candidate was kept instead (RTPMStop).
	Fallbacks int
	// Unsettled counts components that are not eigenvectors, used as found
	// because the iterations hit their cap (Simultaneous).
	Unsettled int
	// Residual is ‖T − Σλ_i v_i⊗3‖_F / ‖T‖_F when the tensor's Frobenius norm
	// is cheap (it implements Normer); NaN otherwise. Computed from the norm
	// identity, so it cannot go below about 1e-8 (cancellation).
	Residual float64
	// EigResidual is max_i ‖T_i(I,v_i,v_i) − λ_i v_i‖ on the tensor deflated by
	// the components before i (power methods), or the relative off-diagonal
	// energy left after joint diagonalisation; it is how far from a fixed point
	// the answer is.
	EigResidual float64
	// Converged is false when a phase that produced the answer hit its
	// iteration cap before Tol; the answer is still returned (not an error).
	// Reason then says which phase, in one line a command line can print as
	// a warning; it also notes RTPMStop fallbacks. Errors are kept for
	// answers that cannot be used (bad rank, degenerate input).
	Converged bool
	Reason    string
}

// limits returns opt.Iters and opt.Tol, or the solver's defaults for those
// not set (≤ 0).
func (opt Options) limits(iters int, tol float64) (int, float64) {
	if opt.Iters > 0 {
		iters = opt.Iters
	}
	if opt.Tol > 0 {
		tol = opt.Tol
	}
	return iters, tol
}

func newRNG(seed uint64) *rand.Rand {
	// The second PCG word is fixed so one seed names one stream.
	return rand.New(rand.NewPCG(seed, 0x73747266))
}

// randomUnit fills m with independent uniform random unit columns.
func randomUnit(m *mat.Dense, rng *rand.Rand) {
	r, c := m.Dims()
	for i := 0; i < r; i++ {
		row := m.RawRowView(i)
		for j := 0; j < c; j++ {
			row[j] = rng.NormFloat64()
		}
	}
	normalizeCols(m)
}

// Warning is the one-line message a command line should print about this
// result, or "" when there is none: a phase hit its iteration cap
// (Converged false) or a stopping rule fell back to the best start
// (Fallbacks > 0). Reason, which names the solver, follows the prefix.
func (res *Result) Warning() string {
	return warning(res.Converged && res.Fallbacks == 0, res.Reason)
}

// Warning is Result.Warning for an asymmetric decomposition (ALS, Alt,
// asymmetric JD).
func (c *CP) Warning() string { return warning(c.Converged, c.Reason) }

func warning(ok bool, reason string) string {
	switch {
	case ok:
		return ""
	case reason == "":
		return "tensor decomposition did not converge"
	}
	return "tensor decomposition did not converge: " + reason
}
