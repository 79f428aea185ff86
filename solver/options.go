package solver

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Options configures every solver. Zero values select the per-solver defaults
// documented on each solver function, so Options{Seed: s} is always valid.
type Options struct {
	// Restarts is the number of random starts: L per component for RTPM, the
	// cap on starts per component for RTPMStop, the number of initialisations
	// for Alt. Ignored by JD and ALS.
	Restarts int
	// Iters caps the iterations of one phase: power iterations (RTPM, Alt),
	// Jacobi/QRJ1D sweeps (JD), ALS sweeps.
	Iters int
	// Tol stops an iteration early once the largest change of a unit factor
	// (or the largest rotation for JD) falls below it. Default 1e-10 (1e-8 for JD sweeps).
	Tol float64
	// Seed drives every random draw (math/rand/v2 PCG).
	Seed uint64
	// Projections is L0, the number of random projections of the first JD
	// stage. Default max(5, ⌈log₂ d⌉+3)... see JD for the exact rule.
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
	// Residual is ‖T − Σλ_i v_i⊗3‖_F / ‖T‖_F when the tensor's Frobenius norm
	// is cheap (it implements Normer); NaN otherwise. Computed from the norm
	// identity, so it cannot go below about 1e-8 (cancellation).
	Residual float64
	// EigResidual is max_i ‖T_i(I,v_i,v_i) − λ_i v_i‖ on the tensor deflated by
	// the components before i (power methods), or the relative off-diagonal
	// energy left after joint diagonalisation; it is how far from a fixed point
	// the answer is.
	EigResidual float64
	// Converged is false when some phase hit its iteration cap before Tol.
	Converged bool
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
	normalizeCols(m, nil)
}
