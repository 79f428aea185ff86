package solver

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Views yields the three views of n samples in row batches. Each call to Each
// is one pass over the samples; x1, x2, x3 hold the same b rows (b×d1, b×d2,
// b×d3) and are only valid during the callback. A pass must yield the same
// rows in the same batches every time, so that sums are reproducible.
//
// DenseViews holds the views in memory; RowViews and ViewsFunc stream them
// from a caller's source, one batch in memory at a time.
type Views interface {
	Dims() (d1, d2, d3 int)
	Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error
}

// Views4 is Views for four views (fourth-order sample tensors).
type Views4 interface {
	Dims() (d1, d2, d3, d4 int)
	Each(ctx context.Context, fn func(x1, x2, x3, x4 *mat.Dense) error) error
}

// SampleTensor is the empirical moment T = (1/n) Σ_l x1⁽ˡ⁾⊗x2⁽ˡ⁾⊗x3⁽ˡ⁾ of a
// set of views, never formed: contractions use the Hadamard form
// T(a,b,I) = X₃ᵀ((X₁a)∗(X₂b))/n ([002] eq. 23), three GEMMs per row batch and
// one pass over the views per Contract call. Memory is O(d·L + b·L) per call
// (b rows per batch, L columns), independent of n: with streaming Views this
// is how k > d (overcomplete) is reached on data larger than memory.
type SampleTensor struct{ V Views }

// Dims returns the views' dimensions.
func (s SampleTensor) Dims() (int, int, int) { return s.V.Dims() }

// Contract implements Asym over one pass of the views.
func (s SampleTensor) Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error {
	xs := spread(mode, 3, x, y)
	var acc sampleAcc
	dst.Zero()
	err := s.V.Each(ctx, func(x1, x2, x3 *mat.Dense) error {
		return acc.add(dst, []*mat.Dense{x1, x2, x3}, mode, xs)
	})
	return acc.finish(dst, err)
}

// SampleTensor4 is the fourth-order empirical moment
// (1/n) Σ_l x1⁽ˡ⁾⊗x2⁽ˡ⁾⊗x3⁽ˡ⁾⊗x4⁽ˡ⁾, contracted in Hadamard form like
// SampleTensor (four GEMMs per row batch, one pass per call).
type SampleTensor4 struct{ V Views4 }

// Dims returns the views' dimensions.
func (s SampleTensor4) Dims() (int, int, int, int) { return s.V.Dims() }

// Contract implements Asym4 over one pass of the views.
func (s SampleTensor4) Contract(ctx context.Context, mode int, dst, x, y, z *mat.Dense) error {
	xs := spread(mode, 4, x, y, z)
	var acc sampleAcc
	dst.Zero()
	err := s.V.Each(ctx, func(x1, x2, x3, x4 *mat.Dense) error {
		return acc.add(dst, []*mat.Dense{x1, x2, x3, x4}, mode, xs)
	})
	return acc.finish(dst, err)
}

// spread places the contraction vectors into the modes other than mode.
func spread(mode, p int, args ...*mat.Dense) []*mat.Dense {
	if mode < 0 || mode >= p {
		panic(fmt.Sprintf("solver: contraction of mode %d of an order-%d tensor", mode, p))
	}
	xs := make([]*mat.Dense, p)
	i := 0
	for m := range xs {
		if m != mode {
			xs[m] = args[i]
			i++
		}
	}
	return xs
}

// sampleAcc accumulates Σ_rows X_freeᵀ(∗_{v≠free} X_v x_v) batch by batch;
// its buffers are reused across batches, so a pass allocates O(b·L) once.
type sampleAcc struct {
	p, q mat.Dense
	n    int
}

func (s *sampleAcc) add(dst *mat.Dense, views []*mat.Dense, mode int, xs []*mat.Dense) error {
	b, dm := views[mode].Dims()
	if r, _ := dst.Dims(); r != dm {
		panic(fmt.Sprintf("solver: sample contraction: view %d has %d columns, dst %d rows", mode, dm, r))
	}
	for v, x := range views {
		if r, _ := x.Dims(); r != b {
			return fmt.Errorf("solver: %w: a batch has %d rows in view %d but %d in view %d", ErrDegenerate, r, v+1, b, mode+1)
		}
	}
	if b == 0 {
		return nil
	}
	s.n += b
	first := true
	for v, x := range views {
		if v == mode {
			continue
		}
		if first {
			s.p.Reset()
			s.p.Mul(x, xs[v])
			first = false
			continue
		}
		s.q.Reset()
		s.q.Mul(x, xs[v])
		s.p.MulElem(&s.p, &s.q)
	}
	// dst += X_freeᵀ P in one GEMM, without a temporary.
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, views[mode].RawMatrix(), s.p.RawMatrix(), 1, dst.RawMatrix())
	return nil
}

func (s *sampleAcc) finish(dst *mat.Dense, err error) error {
	if err != nil {
		return err
	}
	if s.n == 0 {
		return fmt.Errorf("solver: %w: the views yielded no rows", ErrDegenerate)
	}
	dst.Scale(1/float64(s.n), dst)
	return nil
}

// DenseViews holds three views in memory (rows are samples) and yields them
// in batches of Batch rows (default 4096).
type DenseViews struct {
	X1, X2, X3 *mat.Dense
	Batch      int
}

// Dims returns the column counts of the views.
func (v DenseViews) Dims() (int, int, int) {
	_, a := v.X1.Dims()
	_, b := v.X2.Dims()
	_, c := v.X3.Dims()
	return a, b, c
}

// Each yields consecutive row batches.
func (v DenseViews) Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error {
	n, _ := v.X1.Dims()
	xs := []*mat.Dense{v.X1, v.X2, v.X3}
	return eachRowBlock(ctx, n, v.Batch, func(s, e int) error {
		b := rowBlocks(xs, s, e)
		return fn(b[0], b[1], b[2])
	})
}

// rowBlocks returns rows [s, e) of each matrix, without copying.
func rowBlocks(xs []*mat.Dense, s, e int) []*mat.Dense {
	out := make([]*mat.Dense, len(xs))
	for i, x := range xs {
		_, c := x.Dims()
		out[i] = x.Slice(s, e, 0, c).(*mat.Dense)
	}
	return out
}

// eachRowBlock calls fn(s, e) for consecutive row ranges of at most batch
// rows (default 4096) covering [0, n), checking ctx between ranges.
func eachRowBlock(ctx context.Context, n, batch int, fn func(s, e int) error) error {
	if batch <= 0 {
		batch = 4096
	}
	for s := 0; s < n; s += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(s, min(n, s+batch)); err != nil {
			return err
		}
	}
	return nil
}

// RowPass is one pass over a sample source in row batches: it calls fn with
// each batch in order and returns fn's first error or the source's. A batch
// is b × (d1+d2+…) with the views side by side; it need only stay valid
// during the call. Every pass must yield the same batches.
//
// A stream.DenseSource adapts in a few lines (solver does not import stream):
//
//	pass := func(ctx context.Context, fn func(*mat.Dense) error) error {
//		for b, err := range src.Rows(ctx) {
//			if err != nil {
//				return err
//			}
//			err = fn(mat.NewDense(b.Rows, b.Cols, b.Data))
//			b.Release()
//			if err != nil {
//				return err
//			}
//		}
//		return nil
//	}
type RowPass func(ctx context.Context, fn func(rows *mat.Dense) error) error

// MemoryPass is a RowPass over an in-memory matrix, batch rows at a time
// (default 4096).
func MemoryPass(x *mat.Dense, batch int) RowPass {
	return func(ctx context.Context, fn func(*mat.Dense) error) error {
		n, c := x.Dims()
		return eachRowBlock(ctx, n, batch, func(s, e int) error {
			return fn(x.Slice(s, e, 0, c).(*mat.Dense))
		})
	}
}

// RowViews streams three views stored side by side in each row,
// [x1 | x2 | x3] with D1, D2, D3 columns, from a RowPass. Only one batch is
// in memory at a time.
type RowViews struct {
	D1, D2, D3 int
	Pass       RowPass
}

// Dims returns D1, D2, D3.
func (v RowViews) Dims() (int, int, int) { return v.D1, v.D2, v.D3 }

// Each splits every batch of the pass into its three views (no copy).
func (v RowViews) Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error {
	return splitPass(ctx, v.Pass, []int{v.D1, v.D2, v.D3}, func(x []*mat.Dense) error { return fn(x[0], x[1], x[2]) })
}

// RowViews4 is RowViews for four views [x1 | x2 | x3 | x4].
type RowViews4 struct {
	D1, D2, D3, D4 int
	Pass           RowPass
}

// Dims returns D1…D4.
func (v RowViews4) Dims() (int, int, int, int) { return v.D1, v.D2, v.D3, v.D4 }

// Each splits every batch of the pass into its four views (no copy).
func (v RowViews4) Each(ctx context.Context, fn func(x1, x2, x3, x4 *mat.Dense) error) error {
	return splitPass(ctx, v.Pass, []int{v.D1, v.D2, v.D3, v.D4}, func(x []*mat.Dense) error { return fn(x[0], x[1], x[2], x[3]) })
}

// splitPass runs pass and hands fn each batch cut into column blocks of the given widths.
func splitPass(ctx context.Context, pass RowPass, widths []int, fn func([]*mat.Dense) error) error {
	total := 0
	for _, w := range widths {
		total += w
	}
	parts := make([]*mat.Dense, len(widths))
	return pass(ctx, func(rows *mat.Dense) error {
		b, c := rows.Dims()
		if c != total {
			return fmt.Errorf("solver: %w: a row batch has %d columns, the views need %d", ErrDegenerate, c, total)
		}
		if b == 0 {
			return nil
		}
		off := 0
		for i, w := range widths {
			parts[i] = rows.Slice(0, b, off, off+w).(*mat.Dense)
			off += w
		}
		return fn(parts)
	})
}

// ViewsFunc streams three views that a caller already holds as separate
// matrices per batch (for example a model's own pass over view triples):
// Pass calls fn once per batch, x1, x2, x3 with the same number of rows.
type ViewsFunc struct {
	D1, D2, D3 int
	Pass       func(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error
}

// Dims returns D1, D2, D3.
func (v ViewsFunc) Dims() (int, int, int) { return v.D1, v.D2, v.D3 }

// Each runs Pass.
func (v ViewsFunc) Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error {
	return v.Pass(ctx, fn)
}
