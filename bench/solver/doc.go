// Package solverbench reproduces the solver experiments of issue 4 ([003]
// §8/App. A: accuracy versus noise, random versus plug-in projections,
// single-topic model, asymmetric tensors; [002] App. B Table 1; [004]
// Alg. 2 versus Alg. 1; cost versus k) on synthetic tensors with known
// factors. Each experiment is a test gated by STREAMFIT_BENCH (=1, or =full
// for more trials and cases) that prints a Markdown table and counts solver
// errors instead of discarding them; RESULTS.md records the tables and the
// commands. Without STREAMFIT_BENCH `go test ./bench/solver` skips them all.
package solverbench
