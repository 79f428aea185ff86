// Package hmm learns a hidden Markov model — observation matrix O, transition
// matrix T and initial distribution π — from sequences, by the three views
// around the second hidden state (004 Prop 3.4; docs/MATH.md §2.7).
//
// Rows are time steps with the sequence id in stream.Dense.Group; the rows of
// one sequence must be contiguous and in time order, sequence ids must
// increase (a decreasing id is reported as stream.ErrOrder: it is how a
// sequence cut in two shows up with O(1) memory), and every sequence needs
// at least three steps. Observations are one row of real values (one-hot for
// discrete symbols). With h = y₂ the views x₁, x₂, x₃ are conditionally
// independent, E[x₂|h=j] = Oeⱼ, E[x₃|h=j] = OTeⱼ and Pr[h=j] = (Tπ)ⱼ.
// multiview.Decompose, symmetrising towards view 3, yields OT and w = Tπ in one
// order and O = E[x₂x₃ᵀ]((OT)ᵀ)⁺diag(w)⁻¹ in the same order, so no matching is
// needed; then T = O⁺(OT) and π = T⁻¹w, projected onto the simplex.
//
// A k above what the cross moments of consecutive steps support (above d,
// or states sharing a mean observation) fits as many states as they do,
// with a warning (Model.Warnings), not a refusal; that number is a
// function of the pass-1 totals alone, so statistics merged from shards
// give the fit of the whole input. Baum–Welch (Config.EM) starts the
// states the moments do not give as perturbed copies of theirs.
//
// Baum–Welch refines the moment fit by likelihood: of one-hot symbols
// (Config.Discrete), or of Gaussian observations N(x; O[j], Var[j]·I) with
// a variance per state (Model.Var), or with BWConfig.Diag N(x; O[j],
// diag(VarDiag[j])) with a variance per state and coordinate
// (Model.VarDiag, fit hmm --covariance diag), which the moments do not
// give and a first pass starts (GaussianStartPass, GaussianDiagStartPass).
// Its passes' sums are committed
// per sequence and add exactly, so shards and pipelines
// (models.Refinement) give Fit's model, and Posteriors and LogLikelihood
// use the variances.
//
// Two passes, each reading the rows in order; memory is O(d² + k³) plus three
// rows of carry, independent of the number of rows or sequences.
package hmm
