// Package markov learns a Markov chain, or a hidden Markov model, from
// unordered snapshots (001 Thm 1–4, Alg. 1; MATH.md §2.8–2.9): rows come in
// sets (one set id per row, contiguous), every point of a set is the chain
// run for a Geometric(r) time from a start drawn from the set's own Dirichlet
// proportions. Within-set pair and triple statistics, corrected for α₀, give
// the expected transition matrix T = E_t[Pᵗ] (or UT for the HMM); the
// GMM-type moments of single points give U; P follows from r, which is given
// or found by the projection-distance scan of 001 §3.1.
//
// markov owns the set-level estimators, the α₀/σ² corrections and the
// recovery of π, T, U and P. It must not parse files, and it never stores the
// data: memory is O(d² + k³) beyond one set-aligned batch.
package markov
