package gmm

import (
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// firstMoments are the totals of the first pass of either path.
type firstMoments struct {
	n     int64
	sum   []float64 // Σx
	sumSq float64   // Σ‖x‖², the trace of n·E[xxᵀ]
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
	x := models.RowMatrix(b)
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
