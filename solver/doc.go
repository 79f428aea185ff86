// Package solver owns the decompositions of symmetric (and asymmetric)
// third- and fourth-order tensors that streamfit's models reduce to: the
// robust tensor power method with implicit deflation and restarts, its
// stopping-condition variant, two-stage simultaneous diagonalisation
// (orthogonal, non-orthogonal and asymmetric), alternating rank-1 power
// updates for non-orthogonal and overcomplete tensors (third and fourth
// order, with clustering and bias removal), and CP-ALS.
//
// A symmetric solver sees a tensor only through the small Tensor interface:
// its dimension and the block contraction θ ↦ T(I,θ,θ). Everything else it
// needs (T(θ,θ,θ), slices T(I,I,w), Frobenius norms, deflation) is derived
// from that contraction here, so explicit packed tensors (Sym3), sketched
// tensors and implicit operators over cached data rows are interchangeable
// and can be tested against each other. General tensors are seen through
// Asym (two modes contracted) or Asym4 (three); Dense3/Dense4 hold them
// explicitly and SampleTensor/SampleTensor4 contract the empirical moment of
// a set of views in Hadamard form, streaming the rows (Views, RowViews,
// ViewsFunc), so memory does not grow with the number of samples.
//
// The package must not know where a tensor came from: no model
// coefficients, no files, no data formats. The registry (Names, AsymNames,
// ByName, AsymByName, Describe) says which solver suits which tensor; each
// model chooses its own default (rtpm for the models of dense rows, joint
// diagonalisation or the simultaneous power method for LDA).
//
// All randomness comes from an explicit seed (math/rand/v2 PCG); the same
// seed and the same tensor give the same result. Solvers stop at documented
// caps; a capped phase is reported in Converged/Reason rather than looping.
package solver
