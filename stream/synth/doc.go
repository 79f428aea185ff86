// Package synth generates data with known truth for tests, benchmarks and the
// `streamfit gen` command: corpora from LDA and single-topic models (and, in other
// files, samples from the dense models). Generators are stream sources, so data of
// any size is produced batch by batch in bounded memory, in parallel, and
// deterministically: block b of a source draws from a PCG stream keyed by the
// seed and b, so the output does not depend on the number of workers.
//
// A generator draws its model's parameters and holds them as plain values
// (GMMTruth, TopicTruth, ...), with how the rows were generated (Params):
// like the rest of stream, synth knows no model package. Each model's
// package turns the truth into its own model type (gmm.TruthOf, ...) and
// writes it as a truth file (WriteTruth) that reads as a model.
package synth
