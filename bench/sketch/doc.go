// Package sketchbench measures the three representations of the whitened LDA
// third moment (issue 6) side by side on generated corpora: the explicit packed
// k×k×k tensor (implicit.TripleAcc), the tensor sketch (implicit.SketchAcc,
// sketch.TensorSketch) for several sketch lengths b and numbers of sketches,
// and the on-disk rows streamed per contraction (implicit.RowAcc). For each it
// records pass time, solve time, the memory the representation holds, peak RSS,
// the error of T(I,θ,θ) against the explicit tensor and the mean ℓ1 error of
// the recovered topics; and the rowstore's time per contraction against the
// number of documents.
//
// Every path uses the same whitening, so the tables isolate the third moment:
// W spans the true topics (from the generator's truth) and is then re-whitened
// exactly with the pass's measured WᵀM̂2W, as the LDA fit does after its
// randomized whitening. The experiments are tests gated by STREAMFIT_BENCH=1;
// RESULTS.md holds the command and the tables.
package sketchbench
