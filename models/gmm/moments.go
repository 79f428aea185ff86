package gmm

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/internal/stream"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// firstMoments are the sums every path collects on its first pass.
type firstMoments struct {
	n     int64
	sum   []float64 // Σx
	sumSq float64   // Σ‖x‖², the trace of n·E[xxᵀ]
}

func (f *firstMoments) add(b *stream.Dense) {
	f.n += int64(b.Rows)
	for i := range b.Rows {
		for j, v := range b.Row(i) {
			f.sum[j] += v
			f.sumSq += v * v
		}
	}
}

func (f *firstMoments) merge(o *firstMoments) {
	f.n += o.n
	f.sumSq += o.sumSq
	for j, v := range o.sum {
		f.sum[j] += v
	}
}

// batchMatrix views a batch as a rows×d gonum matrix (no copy).
func batchMatrix(b *stream.Dense) blas64.General {
	return blas64.General{Rows: b.Rows, Cols: b.Cols, Stride: b.Cols, Data: b.Data[:b.Rows*b.Cols]}
}

// secondOp is E[xxᵀ] as a sketch.Operator: every product is one pass. The
// first pass also collects the first moments.
type secondOp struct {
	src     stream.DenseSource
	d       int
	workers int
	first   *firstMoments
	passes  int
	// shift is subtracted from the diagonal after the first pass: the noise
	// floor σ²I dominates the tail of the spectrum, and removing (an upper
	// estimate of) it makes each power pass shrink the noise directions by
	// |λ_noise − shift|/(λ_k − shift) instead of λ_noise/λ_k.
	shift float64
}

func (o *secondOp) Dim() int { return o.d }

// MulBlock sets dst = (1/n) Σ x (xᵀ omega) − shift·omega.
func (o *secondOp) MulBlock(ctx context.Context, dst, omega *mat.Dense) error {
	path := o.src.Info().Path
	_, c := omega.Dims()
	om := omega.RawMatrix()
	acc := make([]*mat.Dense, o.workers)
	tmp := make([][]float64, o.workers)
	var fm []firstMoments
	if o.first == nil {
		fm = make([]firstMoments, o.workers)
		for w := range fm {
			fm[w].sum = make([]float64, o.d)
		}
	}
	for w := range acc {
		acc[w] = mat.NewDense(o.d, c, nil)
	}
	err := stream.Each(ctx, o.src.Rows, o.workers, func(w int, b *stream.Dense) error {
		if err := checkBatch(path, b, o.d); err != nil {
			return err
		}
		if b.Rows == 0 {
			return nil
		}
		if fm != nil {
			fm[w].add(b)
		}
		x := batchMatrix(b)
		if cap(tmp[w]) < b.Rows*c {
			tmp[w] = make([]float64, b.Rows*c)
		}
		xo := blas64.General{Rows: b.Rows, Cols: c, Stride: c, Data: tmp[w][:b.Rows*c]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, om, 0, xo)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, x, xo, 1, acc[w].RawMatrix())
		return nil
	})
	if err != nil {
		return err
	}
	o.passes++
	for w := 1; w < o.workers; w++ {
		acc[0].Add(acc[0], acc[w])
	}
	shift := o.shift
	if fm != nil {
		for w := 1; w < o.workers; w++ {
			fm[0].merge(&fm[w])
		}
		o.first = &fm[0]
	}
	f := o.first
	if f.n == 0 {
		return fmt.Errorf("gmm: the source has no rows")
	}
	dst.Scale(1/float64(f.n), acc[0])
	if shift != 0 {
		dst.Add(dst, scaled(-shift, omega))
	}
	if fm != nil {
		// tr Cov/d ≥ σ², close to it when d ≫ k.
		var mm float64
		for _, v := range f.sum {
			mm += v * v
		}
		nf := float64(f.n)
		o.shift = (f.sumSq/nf - mm/(nf*nf)) / float64(o.d)
	}
	return nil
}

// thirdMoments are the sums of the second pass.
type thirdMoments struct {
	n  int64
	t  *solver.Sym3 // Σ z⊗z⊗z with z = Wᵀx
	m1 []float64    // Σ x·‖P⊥(x−m)‖² (differing variances only)
}

// thirdBatch adds batches to the sums of the second pass: Σ (Wᵀx)^⊗3 and,
// when qc is non-nil, Σ x‖P⊥(x−m)‖² where P⊥ projects off the columns of
// qc (the covariance's top k−1 eigenvectors). It holds one worker's
// scratch.
type thirdBatch struct {
	w, qc *mat.Dense
	mean  []float64
	qm    []float64 // Qcᵀm
	kq    int
	z     []float64 // scratch rows×k
	q     []float64 // scratch rows×(k−1)
}

func newThirdBatch(w, qc *mat.Dense, mean []float64) *thirdBatch {
	a := &thirdBatch{w: w, qc: qc, mean: mean}
	if qc != nil {
		d, kq := qc.Dims()
		a.kq = kq
		a.qm = make([]float64, kq)
		for j := range kq {
			for i := range d {
				a.qm[j] += qc.At(i, j) * mean[i]
			}
		}
	}
	return a
}

// add adds the batch b to t and, with differing variances, to m1.
func (a *thirdBatch) add(b *stream.Dense, t *solver.Sym3, m1 []float64) {
	_, k := a.w.Dims()
	x := batchMatrix(b)
	if cap(a.z) < b.Rows*k {
		a.z = make([]float64, b.Rows*k)
	}
	z := blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: a.z[:b.Rows*k]}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, a.w.RawMatrix(), 0, z)
	addCubes(t, z.Data, b.Rows)
	if a.qc == nil {
		return
	}
	kq, mean := a.kq, a.mean
	if kq > 0 {
		if cap(a.q) < b.Rows*kq {
			a.q = make([]float64, b.Rows*kq)
		}
		xq := blas64.General{Rows: b.Rows, Cols: kq, Stride: kq, Data: a.q[:b.Rows*kq]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, a.qc.RawMatrix(), 0, xq)
	}
	for i := range b.Rows {
		row := b.Row(i)
		var e float64 // ‖x−m‖² − ‖Qcᵀ(x−m)‖²
		for j, v := range row {
			e += (v - mean[j]) * (v - mean[j])
		}
		for j := range kq {
			p := a.q[i*kq+j] - a.qm[j]
			e -= p * p
		}
		for j, v := range row {
			m1[j] += v * e
		}
	}
}

// whitenedThird streams the sums of the second pass (see thirdBatch).
func whitenedThird(ctx context.Context, src stream.DenseSource, w *mat.Dense, qc *mat.Dense, mean []float64, workers int) (*thirdMoments, error) {
	path := src.Info().Path
	d, k := w.Dims()
	acc := make([]thirdMoments, workers)
	tb := make([]*thirdBatch, workers)
	for i := range acc {
		acc[i].t = solver.NewSym3(k)
		if qc != nil {
			acc[i].m1 = make([]float64, d)
		}
		tb[i] = newThirdBatch(w, qc, mean)
	}
	err := stream.Each(ctx, src.Rows, workers, func(wk int, b *stream.Dense) error {
		if err := checkBatch(path, b, d); err != nil {
			return err
		}
		if b.Rows == 0 {
			return nil
		}
		acc[wk].n += int64(b.Rows)
		tb[wk].add(b, acc[wk].t, acc[wk].m1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	acc[0].t.Invalidate()
	for i := 1; i < workers; i++ {
		acc[0].n += acc[i].n
		acc[0].t.AddTensor(acc[i].t)
		for j, v := range acc[i].m1 {
			acc[0].m1[j] += v
		}
	}
	return &acc[0], nil
}

func scaled(s float64, a *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.Scale(s, a)
	return &out
}
