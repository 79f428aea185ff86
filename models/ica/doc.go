// Package ica learns the mixing matrix of independent component analysis,
// x = A h + z with independent non-Gaussian sources h and Gaussian noise z, by
// the fourth cumulant (004 Thm 3.4; docs/MATH.md §2.4, §3.8).
//
// The fit keeps O(d² + k³) numbers (O(d·(k+Oversample) + k³) on the sketched path for
// large d), independent of the number of rows, and never forms anything k⁴:
//
//  1. One pass: the mean m and the covariance C = E[(x−m)(x−m)ᵀ] (exactly;
//     when d > ExactDim through a randomized sketch, whose first product
//     shares the pass and each further one takes one more). Its top k eigenpairs (U, Λ), less the noise variance σ²
//     (the mean of the other d−k eigenvalues), give the whitening
//     W = U(Λ−σ²I)^{-1/2} and B = (Wᵀ)⁺ = U(Λ−σ²I)^{1/2}.
//  2. One pass over the whitened rows z = Wᵀ(x−m) accumulates S = E[zzᵀ] and
//     E[(vᵀz) z^⊗3] for a random unit v fixed beforehand (O(k³) per row), so
//     K(I,I,I,v) = Σᵢ κᵢ(bᵢᵀv) bᵢ^⊗3 of the whitened cumulant
//     K = E[z^⊗4] − (three pairings of S) = Σᵢ κᵢ bᵢ^⊗4, whose bᵢ are
//     orthonormal (docs/MATH.md §2.4, §3.8), is formed without K itself.
//
// The symmetric solver (DefaultSolver, "simultaneous": one contraction of
// all k columns an iteration, k⁴/2 work, where the robust tensor power
// method's restarts per component cost about k⁵ and took minutes at k=60
// on 64 dimensions) decomposes K(I,I,I,v). When it gives fewer than k
// components, the polishing steps start the others orthogonal to those it
// gave, with a warning: they separate them as FastICA's steps do from any
// orthogonal start. Mixed-sign
// kurtoses need no special care there: an odd-order term with a negative
// weight is a positive one with the vector negated. Because a random v can
// make some |κᵢ bᵢᵀv| small, the solver's vectors are then polished by
// fourth-order power steps θ ← sign(κ)·K(I,θ,θ,θ) with symmetric
// re-orthonormalisation, a cubically convergent fixed point. Each step is one
// pass contracting K implicitly, K(I,θ,θ,θ) = E[(θᵀz)³z] − 3(θᵀSθ)Sθ for all
// k columns at O(k²) per row; the last pass also gives the kurtoses
// κᵢ = K(θᵢ,θᵢ,θᵢ,θᵢ). The columns of A are Bθᵢ: with unit-variance sources
// they are A's columns up to sign.
//
// By default (Config.Contrast "logcosh") the polishing passes that follow
// the solver take instead the fixed-point steps of the contrast
// E[log cosh(θᵀz)] from its answer, θᵢ ← E[z tanh(θᵢᵀz)] −
// E[1 − tanh²(θᵢᵀz)]·Sθᵢ with the same symmetric re-orthonormalisation
// (FastICA's symmetric iteration, S correcting for the noise the
// whitening leaves): a fourth moment weighs a heavy-tailed source's few
// large values heavily, and tanh bounds them, so the estimate varies less
// (on speech, the unmixing's Amari index falls from 0.011–0.08 to
// 0.0063–0.0066). Each step is one pass at O(k²) per row, as a fourth-order
// step; the last pass still gives the kurtoses.
package ica
