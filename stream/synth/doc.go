// Package synth generates data with known truth for tests, benchmarks and the
// `streamfit gen` command: corpora from LDA and single-topic models (and, in other
// files, samples from the dense models). Generators are stream sources, so data of
// any size is produced batch by batch in bounded memory, in parallel, and
// deterministically: block b of a source draws from a PCG stream keyed by the
// seed and b, so the output does not depend on the number of workers.
//
// The truth of a dense model's samples is that model's own type (gmm.Model,
// ica.Model, hmm.Model, markov.Model, multiview.Model), so tests compare a
// fit and its truth with the model's Eval; only how the rows were generated
// (Params) is the generator's. This is the one package under stream that
// imports models: it generates their data. Tests inside those models' packages
// (and inside implicit, which they import) therefore cannot import it: they
// are external test packages.
package synth
