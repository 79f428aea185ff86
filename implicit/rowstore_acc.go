package implicit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// RowAcc accumulates a third-moment pass for the implicit multi-pass mode:
// the aggregates of RowStats in memory (O(d·K)) and every document's
// whitened row y and 1/n3 compressed on disk in a RowStore, from which
// RowOperator computes T(I,θ,θ) with one streamed pass per call. Close
// removes the files.
type RowAcc struct {
	RowStats
	Store *RowStore
}

// NewRowAcc returns empty statistics for vocabulary size d and k whitened
// dimensions, with their rows stored in a new temporary directory under dir
// ("" means os.TempDir()).
func NewRowAcc(d, k int, dir string, opt RowStoreOptions) (*RowAcc, error) {
	s, err := NewRowStore(dir, k, opt)
	if err != nil {
		return nil, err
	}
	return &RowAcc{RowStats: *NewRowStats(d, k), Store: s}, nil
}

// Add accumulates the documents of b whitened by w (D×K) and stores their rows.
func (a *RowAcc) Add(b *stream.Docs, w *mat.Dense) error {
	y, inv3 := a.RowStats.Add(b, w)
	return a.Store.Append(y, inv3)
}

// Merge adds o's statistics into a and moves o's rows after a's (a takes
// over o's files; o must not be used again).
func (a *RowAcc) Merge(o *RowAcc) error {
	if err := a.RowStats.Merge(&o.RowStats); err != nil {
		return err
	}
	return a.Store.Merge(o.Store)
}

// Close removes the stored rows.
func (a *RowAcc) Close() error { return a.Store.Close() }

// RowOperator is the whitened raw third moment θ ↦ Ê3(W,W,W)(I,θ,θ) over
// rows stored on disk (MATH §3.3). Per call, for a block Θ (K×L) of all
// restarts at once, it streams every chunk Y once and adds
// Yᵀ((YΘ)∘(YΘ)∘(1/n3)) (two GEMMs and a Hadamard product per chunk, chunks
// decompressed and multiplied on Workers goroutines), then the terms that
// were summed over documents into Z and G3 at O(d·K·L). Memory is
// O(ChunkRows·(K+L) + K·L) per worker whatever the number of documents, and
// no K×K×K object is formed. It implements solver.Tensor; it must not outlive
// the RowAcc it came from.
type RowOperator struct {
	k     int
	n     float64
	store *RowStore
	agg   *Operator
}

var _ solver.Tensor = (*RowOperator)(nil)

// Operator finishes the store and returns the operator for the whitening
// matrix w of the pass.
func (a *RowAcc) Operator(w *mat.Dense) (*RowOperator, error) {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: RowAcc.Operator(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	if a.Store.Rows() != a.Docs {
		return nil, fmt.Errorf("implicit: row store holds %d rows for %d documents", a.Store.Rows(), a.Docs)
	}
	if err := a.Store.Finish(); err != nil {
		return nil, err
	}
	agg, err := a.aggregated(w)
	if err != nil {
		return nil, err
	}
	return &RowOperator{k: a.K, n: float64(a.Docs), store: a.Store, agg: agg}, nil
}

// Dim is K.
func (o *RowOperator) Dim() int { return o.k }

// Apply sets column j of dst to Ê3(W,W,W)(I,θ_j,θ_j).
func (o *RowOperator) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	k, l := theta.Dims()
	if dr, dc := dst.Dims(); k != o.k || dr != o.k || dc != l {
		panic(fmt.Sprintf("implicit: RowOperator.Apply: dim %d, theta %d×%d, dst %d×%d", o.k, k, l, dr, dc))
	}
	parts := make([]*mat.Dense, o.store.opt.Workers)
	for i := range parts {
		parts[i] = mat.NewDense(k, l, nil)
	}
	gs := make([]mat.Dense, len(parts))
	ps := make([]mat.Dense, len(parts))
	err := o.store.Scan(ctx, func(wk int, y *mat.Dense, inv3 []float64) error {
		g, p := &gs[wk], &ps[wk]
		g.Reset()
		g.Mul(y, theta)
		gr := g.RawMatrix()
		for r, s := range inv3 {
			row := gr.Data[r*gr.Stride : r*gr.Stride+l]
			for j, v := range row {
				row[j] = v * v * s
			}
		}
		p.Reset()
		p.Mul(y.T(), g)
		parts[wk].Add(parts[wk], p)
		return nil
	})
	if err != nil {
		return err
	}
	if err := o.agg.Apply(ctx, dst, theta); err != nil {
		return err
	}
	for _, p := range parts {
		p.Scale(1/o.n, p)
		dst.Add(dst, p)
	}
	return nil
}
