// Package lda benchmarks spectral LDA (models/lda) on files, as `streamfit fit
// lda` reads them: corpus M of issue 3 (200,000 documents, vocabulary 10,000,
// k=50) in Parquet and UCI docword, a decode-only pass of the same file as the
// unit of time, peak RSS of fresh processes, memory at n and 4n documents, a
// large vocabulary, and the error-vs-n curve. Every measurement runs in its
// own child process (the test binary re-executed), so peak RSS (VmHWM) is the
// run's own. See RESULTS.md for the figures and commands.
//
// Corpora are generated once and cached under $STREAMFIT_BENCH_DIR (default
// the system temporary directory), in streamfit-bench-lda/.
package lda
