// Package stream benchmarks the data layer: one full decoding pass over a
// generated corpus in every format, next to a plain read of the same bytes in the
// same run, with peak RSS; and a memory test checking that a pass's peak RSS does
// not grow with the number of documents.
//
//	go test ./bench/stream -run '^$' -bench . -benchtime 3x
//
// STREAMFIT_BENCH_DOCS sets the corpus size (default 1,000,000 documents, about
// 78M nnz); corpora are cached under STREAMFIT_BENCH_DIR (default the system
// temporary directory) so reruns skip generation.
package stream
