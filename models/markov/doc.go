// Package markov learns a Markov chain, or a hidden Markov model, from
// unordered snapshots (001 Thm 1–4, Alg. 1; docs/MATH.md §2.8–2.9): rows come in
// sets (one set id per row; the rows of a set contiguous, ids increasing),
// every point of a set is the chain run for a Geometric(r) time from a start
// drawn from the set's own Dirichlet proportions. Within-set pair and triple
// statistics, corrected for α₀, give the expected transition matrix
// T = E_t[Pᵗ] (or UT for the HMM); the GMM-type moments of single points give
// U; P follows from r, which is given or found by the scan of 001 §3.1.
//
// Five places depart from 001's text, each for a stated reason:
//   - The U and UT decompositions (and, for a chain, T's columns and the
//     states) are paired by the stochasticity of P(r), with the weights
//     deciding between pairings that pass it, not by sorting the weights
//     alone (pairColumns).
//   - The r scan reads the negative mass of P(r) with its columns rescaled
//     to sum to 1, against a noise floor, rather than the projection
//     distance, and skips windows around the poles λ/(λ−1) of T's negative
//     eigenvalues (scanR; both curves are recorded).
//   - σ² of the HMM is the mean of the d−k+1 smallest covariance
//     eigenvalues, not the smallest (less biased; equal in the population).
//   - The HMM whitens only directions of M2' and M2 larger than the
//     magnitude of their most negative eigenvalue (a noise level), and when
//     they give fewer states than k it fits those and adds copies that leave
//     every set's distribution unchanged, with a warning, rather than
//     refusing (hmmWhitening, withCopies).
//   - For one-hot symbols (Config.Discrete) the snapshots determine only
//     UT: the fit gives UT, smoothed emissions and P = I (fitDiscrete).
//
// markov owns the set-level estimators, the α₀/σ² corrections and the
// recovery of π, T, U and P. It must not parse files, and it never stores the
// data: the per-set sums (S1, Σxxᵀ, Σz⊗3) are additive within a set, so a set
// cut by batch boundaries is accumulated in pieces, and memory is
// O(workers·(d² + k³)) whatever the number or the size of the sets.
package markov
