// Package multiview learns mixtures whose samples come as three views that are
// conditionally independent given a hidden class (004 Thm 3.6, Prop 3.1;
// docs/MATH.md §2.6), and provides the three-view decomposition that models/hmm reuses
// for hidden Markov models (004 Prop 3.4; docs/MATH.md §2.7).
//
// The views are column groups of the rows (Config.Views, or d split into three
// equal parts). Two passes, O(Σ d_t² + k³) numbers, independent of the rows:
//
//  1. The cross moments E[x₁x₂ᵀ], E[x₃x₂ᵀ], E[x₃x₁ᵀ]. They give the
//     symmetrising maps A₁ = E[x₃x₂ᵀ]E[x₁x₂ᵀ]⁺₍ₖ₎ and A₂ = E[x₃x₁ᵀ]E[x₂x₁ᵀ]⁺₍ₖ₎
//     (rank-k truncated pseudo-inverses, so d_t > k is allowed) and
//     M₂ = A₁E[x₁x₂ᵀ]A₂ᵀ = Σ wᵢ μ₃ᵢμ₃ᵢᵀ, whose top k eigenpairs whiten.
//  2. The whitened k×k×k tensor E[(WᵀA₁x₁)⊗(WᵀA₂x₂)⊗(Wᵀx₃)], symmetrised
//     (it is symmetric in expectation), decomposed by a symmetric solver.
//
// Eigenpairs give μ₃ᵢ = λᵢBvᵢ and wᵢ = λᵢ⁻² (docs/MATH.md §4.4); the other views'
// means follow without matching from E[x_t x₃ᵀ] = M₍ₜ₎ diag(w) M₍₃₎ᵀ.
//
// Views can be made from one vector per row (004 Prop 3.2, 3.3):
// Config.RandomViews splits the coordinates of a mixture of product
// distributions at random; Config.Rotate first applies a random rotation,
// which keeps a spherical Gaussian mixture's coordinates conditionally
// independent and gives every view a full-rank mean matrix whatever the
// means' alignment with the axes, and maps the means back (Model.Components).
package multiview
