// Package lda fits latent Dirichlet allocation (α₀ given) and the
// exchangeable single-topic model by the method of moments (MATH §2.1, §2.5,
// §3.5, §4.4) in at most three streamed passes: the corrected second moment
// through block products for a randomized (or, for small vocabularies, exact)
// whitening, then the whitened third moment as a packed k×k×k tensor, which
// the robust tensor power method decomposes. Memory is O(d·k + k³) whatever
// the number of documents.
//
// The package owns LDA's moment corrections and parameter recovery; it must
// not parse files (sources come from stream) or hold decomposition code
// (that is solver's).
package lda
