package lda

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/stream"
)

// sampleDocs is how many documents (at least; whole batches) PlanSource reads
// to estimate the entries of a source that knows only its document count.
const sampleDocs = 20000

// PlanSource is PlanFit for a source: when the source knows its number of
// documents but not of stored entries (Parquet and Arrow files record their
// row counts, not the length of their list columns), it estimates the
// entries from the first batches of one short partial pass (about
// sampleDocs documents) and says so in the plan's NNZEstimated. Its CPU
// figures are at this machine's speed (atMachineSpeed).
func PlanSource(ctx context.Context, src stream.DocSource, cfg Config) (*Plan, error) {
	p, err := planSource(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	return p.atMachineSpeed(), nil
}

// planSource is PlanSource with the reference machine's CPU figures.
func planSource(ctx context.Context, src stream.DocSource, cfg Config) (*Plan, error) {
	info, tokens, estimated, err := sourceInfo(ctx, src)
	if err != nil {
		return nil, err
	}
	p, err := planFit(info, tokens, cfg)
	if err != nil {
		return nil, err
	}
	p.NNZEstimated = estimated
	return p, nil
}

// sourceInfo is src's Info with its entries estimated from the first
// documents when the source does not know them (estimated), and its tokens
// (−1: unknown).
func sourceInfo(ctx context.Context, src stream.DocSource) (info stream.Info, tokens int64, estimated bool, err error) {
	info, tokens = src.Info(), -1
	if info.Rows > 0 {
		// The first documents give the entries (when the source's
		// metadata does not) and the tokens per entry, which size the EM
		// passes' sample.
		nnz, toks, exact, err := estimateNNZ(ctx, src, info.Rows)
		if err != nil {
			return info, -1, false, err
		}
		if info.NNZ < 0 {
			info.NNZ, estimated = nnz, nnz >= 0 && !exact
		}
		if toks >= 0 && nnz > 0 {
			tokens = int64(float64(toks) / float64(nnz) * float64(info.NNZ))
		}
	}
	return info, tokens, estimated, nil
}

// estimateNNZ scales the entries and tokens per document of the first
// batches of src (at least sampleDocs documents, or all of them) to rows
// documents; −1 when the sample holds no document; exact when the sample
// was the whole source.
func estimateNNZ(ctx context.Context, src stream.DocSource, rows int64) (nnz, tokens int64, exact bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var docs int64
	for b, err := range src.Docs(ctx) {
		if err != nil {
			return 0, 0, false, fmt.Errorf("lda: sampling the first documents for the plan: %w", err)
		}
		docs += int64(b.Len())
		nnz += int64(b.NNZ())
		tokens += b.Tokens()
		b.Release()
		if docs >= sampleDocs {
			break
		}
	}
	if docs == 0 {
		return -1, -1, false, nil
	}
	if docs >= rows {
		return nnz, tokens, true, nil
	}
	f := float64(rows) / float64(docs)
	return int64(float64(nnz) * f), int64(float64(tokens) * f), false, nil
}
