// Package gmm learns Gaussian mixtures: spherical ones x = μ_h + σ_h·N(0, I) by the
// method of moments (004 Thm 3.2 and 3.3, docs/MATH.md §2.2–2.3, §3.6): a streamed
// second moment (exact d×d for small d, a randomized sketch plus the trace for
// large d) gives σ² and the whitening; a second pass accumulates the whitened
// third moment, corrected for the noise, as a k×k×k symmetric tensor; the
// robust tensor power method turns its eigenpairs into means, weights and
// (common or per-component) variances.
//
// On real data the moment fit is the start of streamed EM passes (em.go),
// which fit a variance per component or, with EMConfig.Diag, per component
// and feature (a diagonal mixture, Model.Covariance CovDiag).
//
// gmm owns the moment corrections and the recovery of the parameters. It must
// not parse files (it reads a stream.DenseSource), and it never stores the
// data: memory is O(d·k + k³) beyond one batch (O(d²) on the exact path).
package gmm
