package implicit

import (
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The first pass of the dense models that whiten exactly (GMM, ICA): the
// totals "sum" Σx, "sumsq" Σ‖x‖² and "second" Σxxᵀ (upper triangle,
// packed row by row) of the rows. The passes after it carry them (with the
// number of rows) as their basis, so that every shard derives the same
// whitening from them.

// MomentPass returns the first pass with header h over rows of d columns
// (h.D), checking each batch with check. It refuses d beyond exactDim: the
// exact second moment is d×d (beyond it, a model takes SecondSketch).
func MomentPass(h statsfile.Header, exactDim int, check func(*stream.Dense) error) (*Pass, error) {
	d := h.D
	if d > exactDim {
		return nil, fmt.Errorf("d=%d exceeds the exact dimension %d: the exact second moment is d×d (take the sketched passes, SecondSketch, or raise the exact dimension, ExactDim, to %d or more)", d, exactDim, d)
	}
	return &Pass{Header: h, Sums: MomentSums(d), Worker: MomentWorker(d, check)}, nil
}

// MomentSums are the totals of the first pass over rows of d columns.
func MomentSums(d int) []SumShape {
	return []SumShape{{Name: "sum", Len: d}, {Name: "sumsq", Len: 1}, {Name: "second", Len: d * (d + 1) / 2}}
}

// MomentWorker returns the Pass.Worker of MomentSums, which adds a batch
// after check has accepted it.
func MomentWorker(d int, check func(*stream.Dense) error) func() BatchFunc {
	return func() BatchFunc {
		s := mat.NewSymDense(d, nil)
		return func(b *stream.Dense, out [][]float64, _ func() error) error {
			if err := check(b); err != nil {
				return err
			}
			addFirst(b, out[0], out[1])
			raw := s.RawSymmetric()
			clear(raw.Data)
			x := blas64.General{Rows: b.Rows, Cols: b.Cols, Stride: b.Cols, Data: b.Data[:b.Rows*b.Cols]}
			blas64.Syrk(blas.Trans, 1, x, 0, raw)
			n := 0
			for i := range d {
				n += copy(out[2][n:], raw.Data[i*d+i:(i+1)*d])
			}
			return nil
		}
	}
}

// addFirst adds Σx of the batch b to sum and Σ‖x‖² to sumsq[0].
func addFirst(b *stream.Dense, sum, sumsq []float64) {
	for i := range b.Rows {
		for j, v := range b.Row(i) {
			sum[j] += v
			sumsq[0] += v * v
		}
	}
}

// MomentsFixed returns the merged totals of MomentSums in st, with the
// number of rows, as the fixed arrays a later pass carries.
func MomentsFixed(st *DenseStats) []Fixed {
	return append(firstFixed(st.Rows, st.Sum("sum"), st.Sum("sumsq")), Fixed{Name: "second", Values: st.Sum("second")})
}

// Moments are the carried totals of the first pass.
type Moments struct {
	N      int64
	Sum    []float64
	SumSq  float64
	Second *mat.SymDense // Σxxᵀ (nil on the sketched path)
}

// CarriedMoments reads the totals that MomentsFixed made, for rows of d
// columns.
func CarriedMoments(fixed []Fixed, d int) (*Moments, error) {
	mo, err := carriedFirst(fixed, d)
	if err != nil {
		return nil, err
	}
	second := (&DenseStats{Fixed: fixed}).Get("second")
	if len(second) != d*(d+1)/2 {
		return nil, errors.New("the statistics do not carry the second moment of the first pass")
	}
	s := mat.NewSymDense(d, nil)
	raw := s.RawSymmetric()
	n := 0
	for i := range d {
		n += copy(raw.Data[i*d+i:(i+1)*d], second[n:])
	}
	mo.Second = s
	return mo, nil
}

// carriedFirst reads the carried rows, Σx and Σ‖x‖² of the first pass over
// rows of d columns.
func carriedFirst(fixed []Fixed, d int) (*Moments, error) {
	st := DenseStats{Fixed: fixed}
	rows, sum, sumsq := st.Get("rows"), st.Get("sum"), st.Get("sumsq")
	if len(rows) != 1 || len(sum) != d || len(sumsq) != 1 {
		return nil, errors.New("the statistics do not carry the totals of the first pass")
	}
	if rows[0] < 0 || rows[0] != float64(int64(rows[0])) {
		return nil, fmt.Errorf("the statistics carry %g rows", rows[0])
	}
	return &Moments{N: int64(rows[0]), Sum: sum, SumSq: sumsq[0]}, nil
}
