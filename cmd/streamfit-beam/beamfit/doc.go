// Package beamfit runs streamfit's LDA, single-topic and dense-model fits as
// Apache Beam pipelines: the files are cut into work units (Parquet row groups, Arrow
// IPC record batches, whole files otherwise), each unit's shard statistics
// are computed by the library (models/lda: Phase1Stats, PowerStats,
// Phase2Stats), a Beam combiner merges them with the library's exact merge
// (implicit.TopicStats.Merge), each phase takes the merged statistics of the one
// before as a side input, and the last step fits the model (lda.FitStats)
// or writes the merged statistics for `streamfit stats --append`. A dense
// model (Settings.Model: GMM, ICA, multiview, HMM, the snapshot models)
// runs the passes of its shard workflow (models/shard) over the sample
// rows of the units, as many as its plan takes (the sketched whitening of
// GMM and ICA included), merged by implicit.DenseStats.Merge, and is
// fitted by the model's FitStats; when its fit refines the moments by
// likelihood (models.Refinement: GMM's EM, the HMM's Baum–Welch), the
// pipeline runs those passes after them, in the EM stages of the topic
// models. A sweep over k (Settings.Ks) runs the library's stages of a
// sweep (lda.SweepConfig, FitKStats, SweepEMPassStats, SweepEMStep,
// SweepFromStages) in the same EM stages, each stage's read of a unit
// serving every k still refining, and writes a model per k.
//
// The model equals, byte for byte, that of `streamfit stats`, `merge` and
// `fit --from-stats` over the same files, on any runner and with any
// parallelism: the merges are exact and independent of their order.
package beamfit
