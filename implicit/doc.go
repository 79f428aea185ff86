// Package implicit owns the moment accumulators of a streamed fit and the
// implicit tensor operators built from them: per-document unbiased pair and
// triple estimators (docs/MATH.md §3.1), the product E2·Ω of the pair moment with a
// block of vectors (§3.4, never d×d), the whitened pair and triple statistics
// (with E2·W, for mapping results back to the vocabulary), the explicit
// packed k×k×k whitened third moment, the operator θ ↦ T(I,θ,θ) over cached
// whitened rows (§3.3), and the algebra models use on them without knowing
// which is which: low-rank corrections (Correction, Corrected) and changes of
// whitening basis (Transform, Transformed).
//
// Every accumulator is a plain sum with counts in exported fields, so the
// statistics of two shards add up (Merge) to those of their union and are
// encoded as the payload of a statistics file (TopicStats, DenseStats),
// whose container (framing, header, checksums, errors, the layout of arrays
// as sections) is package implicit/statsfile. A pass (Pass)
// reduces batches on several goroutines but adds the batch sums to the
// totals in batch order, so its result does not depend on the number of
// workers; batch sums may be formed in float32 (Float32),
// the totals are float64. The same machinery serves accumulators kept
// outside the package: InOrder runs a pass whose commits come in batch
// order, SplitBatches and SkipBatches shape its source, and FixedScale and
// FixedArray make its totals exact (the topic models' EM statistics,
// models/lda). implicit must not choose a model's coefficients:
// corrections such as LDA's α₀ terms are applied by models/ through
// Correction, and the E-step of a topic model lives with the model.
package implicit
