// Package models holds what every model of streamfit shares once its moments
// are decomposed: the model file (JSON, written atomically), projection of
// estimated distributions onto the probability simplex, and the evaluation of
// a fitted model against known truth by optimal topic matching.
//
// One sub-package per model (models/lda for LDA and the single-topic model)
// says which statistics it needs, applies its moment corrections and recovers
// its parameters. models must not parse input files: data comes in through
// stream sources, and statistics through implicit accumulators.
package models
