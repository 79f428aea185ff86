package hmm

import (
	"context"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
)

// triples reads src in order through a seqReader, as the passes do, and
// hands fn the blocks of triples; it returns the numbers of rows and
// sequences.
func triples(ctx context.Context, src stream.DenseSource, d int, windows bool, fn func(int, blas64.General, blas64.General, blas64.General) error) (int64, int64, error) {
	r := newSeqReader(src.Info().Path, d, windows)
	var (
		rows int64
		seqs float64
		ferr error
	)
	call := func(x1, x2, x3 blas64.General) {
		if ferr == nil {
			ferr = fn(0, x1, x2, x3)
		}
	}
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return rows, int64(seqs), err
		}
		rows += int64(b.Rows)
		err := r.batch(b, call, &seqs, func() error { return nil })
		b.Release()
		if err != nil {
			return rows, int64(seqs), err
		}
	}
	if err := r.batch(nil, call, &seqs, func() error { return nil }); err != nil {
		return rows, int64(seqs), err
	}
	return rows, int64(seqs), ferr
}
