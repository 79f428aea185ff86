// Package models holds what every model of streamfit shares once its moments
// are decomposed: the model file (JSON, written atomically), projection of
// estimated distributions onto the probability simplex, and the evaluation of
// a fitted model against known truth by optimal topic matching.
//
// It also holds the registry of models (Register, Lookup, Kinds): each model
// describes itself by one Kind value — its name, its settings and their
// flags, its generator, its passes and statistics, its fit from them, its
// model file, evaluation and report section — and the command line and the
// Beam pipeline find every model there instead of naming any (models/all
// registers streamfit's own). A model of dense rows is a DenseKind made of
// its package's functions.
//
// One sub-package per model (models/lda for LDA and the single-topic model)
// says which statistics it needs, applies its moment corrections and recovers
// its parameters. models must not parse input files: data comes in through
// stream sources, and statistics through implicit accumulators.
package models
