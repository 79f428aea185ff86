// Package ica learns the mixing matrix of independent component analysis,
// x = A h + z with independent non-Gaussian sources h and Gaussian noise z, by
// the fourth cumulant (004 Thm 3.4; MATH §2.4, §3.8).
//
// The fit makes two passes over the rows and keeps O(d² + k⁴) numbers
// (O(d·k + k⁴) on the sketched path for large d), independent of the number of
// rows:
//
//  1. The mean m and the covariance C = E[(x−m)(x−m)ᵀ] (exactly, or through a
//     randomized sketch when d > ExactDim). Its top k eigenpairs (U, Λ), less
//     the noise variance σ² (the mean of the other d−k eigenvalues), give the
//     whitening W = U(Λ−σ²I)^{-1/2} and B = (Wᵀ)⁺ = U(Λ−σ²I)^{1/2}.
//  2. The whitened rows z = Wᵀ(x−m) stream into Σzzᵀ and the k²×k² fourth
//     moment Σ(z⊗z)(z⊗z)ᵀ, from which the whitened cumulant
//     K = E[z^⊗4] − (three pairings of E[zzᵀ]) = Σᵢ κᵢ bᵢ^⊗4 has orthonormal bᵢ.
//
// As MATH §2.4 and §3.8 describe, K is reduced to the third-order tensor
// K(I,I,I,v) = Σᵢ κᵢ(bᵢᵀv) bᵢ^⊗3 for a random unit v, which the symmetric
// solver (default "rtpm") decomposes. Mixed-sign kurtoses need no special care
// there: an odd-order term with a negative weight is a positive one with the
// vector negated. Because a random v can make some |κᵢ bᵢᵀv| small, the
// solver's vectors are then polished by a few fourth-order power steps
// θ ← sign(κ)·K(I,θ,θ,θ) with symmetric re-orthonormalisation (a cubically
// convergent fixed point on the exact cumulant, no further pass). The columns
// of A are Bθᵢ: with unit-variance sources they are A's columns up to sign.
package ica
