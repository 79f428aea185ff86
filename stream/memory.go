package stream

import (
	"context"
	"iter"
)

// MemoryDocs is a DocSource over documents held in memory, for tests and small
// corpora. Each pass yields copies in batches of BatchRows documents.
type MemoryDocs struct {
	All       *Docs
	Terms     int
	Vocab     []string
	BatchRows int
}

// Info describes the in-memory corpus.
func (m *MemoryDocs) Info() Info {
	return Info{Format: "memory", Terms: m.Terms, Vocab: m.Vocab, Rows: int64(m.All.Len()), NNZ: int64(m.All.NNZ())}
}

// Docs yields the documents in batches.
func (m *MemoryDocs) Docs(ctx context.Context) iter.Seq2[*Docs, error] {
	return memBatches(ctx, m.All.Len(), m.BatchRows, func(lo, hi int) *Docs {
		b := NewDocs(m.All.Start + int64(lo))
		for i := lo; i < hi; i++ {
			b.AppendDoc(m.All.Doc(i))
		}
		return b
	})
}

// memBatches yields cut(lo, hi) for consecutive ranges of n rows, step rows
// each (DefaultBatchRows when step ≤ 0), stopping at ctx's cancellation.
func memBatches[B any](ctx context.Context, n, step int, cut func(lo, hi int) B) iter.Seq2[B, error] {
	if step <= 0 {
		step = DefaultBatchRows
	}
	return func(yield func(B, error) bool) {
		for lo := 0; lo < n; lo += step {
			if err := ctx.Err(); err != nil {
				var zero B
				yield(zero, err)
				return
			}
			if !yield(cut(lo, min(lo+step, n)), nil) {
				return
			}
		}
	}
}

// Collect reads a whole pass of src into one batch (for tests and small data).
func Collect(ctx context.Context, src DocSource) (*Docs, error) {
	all := &Docs{Offsets: []int{0}}
	for b, err := range src.Docs(ctx) {
		if err != nil {
			return nil, err
		}
		for i := range b.Len() {
			all.AppendDoc(b.Doc(i))
		}
		b.Release()
	}
	return all, nil
}

// MemoryDense is a DenseSource over rows held in memory.
type MemoryDense struct {
	All       *Dense
	BatchRows int
}

// Info describes the in-memory table.
func (m *MemoryDense) Info() Info {
	return Info{Format: "memory", Rows: int64(m.All.Rows), Cols: m.All.Cols, NNZ: -1}
}

// Rows yields the rows in batches.
func (m *MemoryDense) Rows(ctx context.Context) iter.Seq2[*Dense, error] {
	return memBatches(ctx, m.All.Rows, m.BatchRows, func(lo, hi int) *Dense {
		b := NewDense(m.All.Start+int64(lo), m.All.Cols)
		b.Data = append(b.Data, m.All.Data[lo*m.All.Cols:hi*m.All.Cols]...)
		b.Rows = hi - lo
		if m.All.Group != nil {
			b.Group = append(b.Group[:0], m.All.Group[lo:hi]...)
		}
		return b
	})
}

// CollectDense reads a whole pass of src into one batch.
func CollectDense(ctx context.Context, src DenseSource) (*Dense, error) {
	var all *Dense
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = &Dense{Cols: b.Cols}
		}
		all.Data = append(all.Data, b.Data...)
		all.Rows += b.Rows
		if b.Group != nil {
			all.Group = append(all.Group, b.Group...)
		}
		b.Release()
	}
	if all == nil {
		all = &Dense{Cols: src.Info().Cols}
	}
	return all, nil
}
