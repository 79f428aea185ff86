// Package solver owns the decompositions of symmetric (and asymmetric)
// third-order tensors that streamfit's models reduce to: the robust tensor
// power method with implicit deflation and restarts, its stopping-condition
// variant, two-stage simultaneous diagonalisation (orthogonal and
// non-orthogonal), alternating rank-1 power updates for non-orthogonal and
// overcomplete tensors, and CP-ALS.
//
// A solver sees a tensor only through the small Tensor interface: its
// dimension and the block contraction θ ↦ T(I,θ,θ). Everything else it needs
// (T(θ,θ,θ), slices T(I,I,w), Frobenius norms, deflation) is derived from that
// contraction here, so explicit packed tensors (Sym3), sketched tensors and
// implicit operators over cached data rows are interchangeable and can be
// tested against each other. The package must not know where a tensor came
// from: no model coefficients, no files, no data formats.
//
// All randomness comes from an explicit seed (math/rand/v2 PCG); the same
// seed and the same tensor give the same result.
package solver
