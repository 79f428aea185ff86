// Package lda fits latent Dirichlet allocation (α₀ given) and the
// exchangeable single-topic model by the method of moments (docs/MATH.md §2.1, §2.5,
// §3.5, §4.4) in two streamed passes: a sketch M2·Ω of the corrected second
// moment for a randomized (or, for small vocabularies, exact) whitening, then
// the whitened third moment as a packed k×k×k tensor together with M2·W,
// which the robust tensor power method decomposes and through which topics
// are mapped back. Memory is O(d·k + k³) whatever the number of documents,
// and the result does not depend on the number of workers.
//
// The same passes, and the power pass of the whitening, can run shard by
// shard as mergeable statistics (Phase1Stats, PowerStats, Phase2Stats,
// FitStats), for sharded and incremental fits.
//
// # How a fit runs
//
//  1. pass 1 accumulates the document counts, M̂1 and Ê2·Ω for a seeded
//     sparse sign test matrix Ω of k+oversample columns (the identity for a
//     vocabulary of at most ExactDim words), never M2 itself; the top-k left
//     singular vectors Q of the sketch M2·Ω span the topics (the range
//     finder; exact eigenvectors for a small vocabulary), and W = Q D^{-1/2}
//     whitens M2 approximately (docs/MATH.md §4.1);
//  2. pass 2 accumulates the whitened third moment, corrected for LDA (docs/MATH.md
//     §3.5), in the representation cfg.Third names (the packed k×k×k
//     tensor, a tensor sketch, or the whitened rows on disk; Auto asks
//     PlanSource), together with Ê2·W; WᵀM̂2W from the same pass re-whitens
//     the tensor exactly (W → W·P, P = (WᵀM̂2W)^{-1/2}, a k×k change of
//     basis), so W need only span the topics well;
//  3. the tensor decomposition (Config.Solver; by default the
//     simultaneous power method where EM follows or a contraction is a
//     pass over the rows or a set of FFTs, else joint diagonalisation or,
//     above 128 topics, RTPM) finds the eigenpairs (λᵢ, vᵢ),
//     and μᵢ = (α₀+2)/2·λᵢ·M̂2WP·vᵢ, αᵢ = 4α₀(α₀+1)/((α₀+2)²λᵢ²) (docs/MATH.md
//     §4.4, with (Wᵀ)⁺ replaced by M̂2·W, which equals it when W spans the
//     top-k eigenspace exactly and otherwise maps back through the measured
//     second moment instead of projecting the topics onto span(W):
//     M2·W·vᵢ = √wᵢ·μᵢ holds for any W with WᵀM2W = I); each topic is
//     projected onto the simplex and the topics are ordered by weight;
//  4. with cfg.EM.Passes > 0, variational EM passes over src refine that
//     spectral fit by likelihood (EM; one more pass each).
//
// Real text can add passes to the two: when W holds a negative direction
// of M̂2 (WᵀM̂2W not positive definite), a power pass over the first
// sketch's range comes before pass 2, whitening with M̂2's k largest
// positive Ritz values there; when that range holds fewer than k positive
// ones, the fit starts over with a sketch of more columns. The fit sees
// the negative direction on its first documents (pass 1 keeps them, or,
// resumed after pass 1, they are read again; not a pass); should they miss
// it, pass 2 finds it, and the power pass and pass 2 again follow.
//
// Both Fit and the shard workflow add the batches' partial sums as the
// same exact totals (implicit.Exact), so the order and grouping of the
// batches never changes a bit of the result.
//
// The package owns LDA's moment corrections and parameter recovery, and
// the likelihood side of the topic models: the per-document variational
// E-step (EStep for fixed TopicParams), the additive statistics of an EM
// pass (EMAcc, exact through implicit.FixedArray) and their statistics file
// (EMStats), inference and held-out scoring. It must not parse files
// (sources come from stream) or hold decomposition code (that is
// solver's).
package lda
