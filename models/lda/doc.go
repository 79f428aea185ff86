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
// The package owns LDA's moment corrections and parameter recovery; it must
// not parse files (sources come from stream) or hold decomposition code
// (that is solver's).
package lda
