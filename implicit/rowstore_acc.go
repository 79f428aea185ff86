package implicit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// RowAcc accumulates a third-moment pass for the implicit multi-pass mode:
// the statistics of a TripleAcc without cubes (NoCubes: O(d·K) in memory)
// and every document's whitened row y and 1/n3 compressed on disk in a
// RowStore, appended in document order by the pass's row hook (OnRows),
// from which RowOperator computes T(I,θ,θ) with one streamed pass per call.
// Pass and Add are the TripleAcc's (parallel, summed in batch order); Close
// removes the files.
type RowAcc struct {
	*TripleAcc
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
	acc := NewTripleAccNoCubes(d, k)
	acc.OnRows = s.Append
	return &RowAcc{TripleAcc: acc, Store: s}, nil
}

// Merge adds o's statistics into a and moves o's rows after a's (a takes
// over o's files; o must not be used again).
func (a *RowAcc) Merge(o *RowAcc) error {
	if err := a.TripleAcc.Merge(o.TripleAcc); err != nil {
		return err
	}
	return a.Store.Merge(o.Store)
}

// Close removes the stored rows.
func (a *RowAcc) Close() error { return a.Store.Close() }

// RowOperator is the whitened raw third moment θ ↦ Ê3(W,W,W)(I,θ,θ) over
// rows stored on disk (docs/MATH.md §3.3). Per call, for a block Θ (K×L) of all
// restarts at once, it streams every chunk Y once and adds
// Yᵀ((YΘ)∘(YΘ)∘(1/n3)) (two GEMMs and a Hadamard product per piece of a
// chunk, chunks decompressed and multiplied on the store's Workers
// goroutines and added in chunk order, so the result does not depend on
// Workers), then the terms that were summed over documents into Z and G3
// at O(d·K·L). Memory is O(ChunkRows·K + K·L) per worker whatever the
// number of documents, and no K×K×K object is formed. It implements
// tensor.Tensor; it must not outlive the RowAcc it came from.
type RowOperator struct {
	k     int
	n     float64
	store *RowStore
	agg   *Operator
	// Progress, when set, is called after each chunk a contraction has
	// read, one call at a time, with the rows read so far in that
	// contraction: at large K one contraction is a long pass over the rows
	// on disk (minutes at K=1000), and a user wants to see it move.
	Progress func(rows int64)
}

var _ tensor.Tensor = (*RowOperator)(nil)

// Operator finishes the store and returns the operator for the whitening
// matrix w of the pass.
func (a *RowAcc) Operator(w *mat.Dense) (*RowOperator, error) {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: RowAcc.Operator(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	return NewRowOperator(a.Store, a.TripleAcc, w)
}

// NewRowOperator returns the operator over the rows in store and the
// aggregated terms of acc (statistics of the same pass, with or without
// cubes; only Z, G3 and the counts are used) for the pass's whitening w.
func NewRowOperator(store *RowStore, acc *TripleAcc, w *mat.Dense) (*RowOperator, error) {
	if acc.Docs == 0 {
		return nil, ErrNoDocs
	}
	if store.Rows() != acc.Docs {
		return nil, fmt.Errorf("implicit: row store holds %d rows for %d documents", store.Rows(), acc.Docs)
	}
	if store.k != acc.K {
		return nil, fmt.Errorf("implicit: row store of k=%d for statistics of k=%d", store.k, acc.K)
	}
	if err := store.Finish(); err != nil {
		return nil, err
	}
	agg, err := acc.Aggregated(w)
	if err != nil {
		return nil, err
	}
	return &RowOperator{k: acc.K, n: float64(acc.Docs), store: store, agg: agg}, nil
}

// Dim is K.
func (o *RowOperator) Dim() int { return o.k }

// Rows is the number of rows each contraction reads.
func (o *RowOperator) Rows() int64 { return o.store.Rows() }

// applyBytes bounds the scratch YΘ of one worker: a chunk is multiplied a
// piece of rows at a time so that wide blocks (L in the thousands at large
// K) stay within a few megabytes.
const applyBytes = 4 << 20

// Apply sets column j of dst to Ê3(W,W,W)(I,θ_j,θ_j).
func (o *RowOperator) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	k, l := theta.Dims()
	if dr, dc := dst.Dims(); k != o.k || dr != o.k || dc != l {
		panic(fmt.Sprintf("implicit: RowOperator.Apply: dim %d, theta %d×%d, dst %d×%d", o.k, k, l, dr, dc))
	}
	piece := max(16, applyBytes/(8*l))
	workers := o.store.opt.Workers
	parts := make([]*mat.Dense, workers)
	gs := make([]mat.Dense, workers)
	total := mat.NewDense(k, l, nil)
	chunkRows := make([]int, workers)
	var read int64
	err := o.store.ScanOrdered(ctx, func(wk int, y *mat.Dense, inv3 []float64) {
		if parts[wk] == nil {
			parts[wk] = mat.NewDense(k, l, nil)
		}
		p, g := parts[wk], &gs[wk]
		p.Zero()
		rows, _ := y.Dims()
		chunkRows[wk] = rows
		for r0 := 0; r0 < rows; r0 += piece {
			r1 := min(rows, r0+piece)
			yp := y.Slice(r0, r1, 0, k)
			g.Reset()
			g.Mul(yp, theta)
			gr := g.RawMatrix()
			for r, s := range inv3[r0:r1] {
				row := gr.Data[r*gr.Stride : r*gr.Stride+l]
				for j, v := range row {
					row[j] = v * v * s
				}
			}
			// p += ypᵀ·g without a temporary.
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, yp.(*mat.Dense).RawMatrix(), gr, 1, p.RawMatrix())
		}
	}, func(wk int) {
		total.Add(total, parts[wk])
		if read += int64(chunkRows[wk]); o.Progress != nil {
			o.Progress(read)
		}
	})
	if err != nil {
		return err
	}
	if err := o.agg.Apply(ctx, dst, theta); err != nil {
		return err
	}
	total.Scale(1/o.n, total)
	dst.Add(dst, total)
	return nil
}
