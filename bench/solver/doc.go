// Package solverbench reproduces the solver experiments of issue 4 ([003]
// §8/App. A, [002] App. B Table 1, cost versus k) on synthetic tensors with
// known factors. Each experiment is a test gated by STREAMFIT_BENCH=1 that
// prints a Markdown table; RESULTS.md records the tables and commands.
package solverbench
