package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Gaussian returns the d×cols test matrix of independent standard normal
// entries that TopEigen multiplies by first for this seed.
func Gaussian(d, cols int, seed uint64) *mat.Dense {
	omega := mat.NewDense(d, cols, nil)
	r := rand.New(rand.NewPCG(seed, 0x5ce7c4))
	raw := omega.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = r.NormFloat64()
	}
	return omega
}

// DefaultSparsity is the number of non-zeros per row of SparseSign test
// matrices: Martinsson and Tropp (2020, §9.2) find sparse sign matrices with
// about 8 non-zeros per row as reliable as Gaussian ones for range finding.
const DefaultSparsity = 8

// SparseSign returns a d×cols sparse sign test matrix: each row holds
// min(zeta, cols) entries ±1/√zeta in distinct columns drawn uniformly, the
// rest are zero. Its product with a sparse data matrix costs zeta operations
// per non-zero instead of cols, and it serves the range finder as well as a
// Gaussian matrix (Martinsson and Tropp 2020, §9.2). It is stored by rows
// (d·zeta entries, not d·cols); accumulators that see RowNZ use it.
func SparseSign(d, cols, zeta int, seed uint64) *Sparse {
	if d < 1 || cols < 1 || zeta < 1 {
		panic(fmt.Sprintf("sketch: SparseSign(%d, %d, %d): sizes must be positive", d, cols, zeta))
	}
	z := min(zeta, cols)
	s := &Sparse{r: d, c: cols, start: make([]int32, d+1), col: make([]int32, 0, d*z), val: make([]float64, 0, d*z)}
	r := rand.New(rand.NewPCG(seed, 0x5a75e))
	perm := make([]int, cols)
	for i := range perm {
		perm[i] = i
	}
	v := 1 / math.Sqrt(float64(z))
	for i := range d {
		// A partial Fisher–Yates shuffle picks z distinct columns, kept in
		// increasing order.
		for j := range z {
			t := j + r.IntN(cols-j)
			perm[j], perm[t] = perm[t], perm[j]
		}
		cs := slices.Clone(perm[:z])
		slices.Sort(cs)
		for _, c := range cs {
			x := v
			if r.Uint64()&1 == 1 {
				x = -v
			}
			s.col = append(s.col, int32(c))
			s.val = append(s.val, x)
		}
		s.start[i+1] = int32(len(s.col))
	}
	return s
}

// Sparse is a matrix stored by rows in compressed form (column indices
// increasing within a row). It implements mat.Matrix, so gonum can multiply
// by it (entry by entry), and RowNZ, so accumulators can do better.
type Sparse struct {
	r, c  int
	start []int32
	col   []int32
	val   []float64
}

var _ mat.Matrix = (*Sparse)(nil)

// Dims returns the numbers of rows and columns.
func (s *Sparse) Dims() (r, c int) { return s.r, s.c }

// At returns entry (i, j).
func (s *Sparse) At(i, j int) float64 {
	if i < 0 || i >= s.r || j < 0 || j >= s.c {
		panic(mat.ErrIndexOutOfRange)
	}
	cols, vals := s.RowNZ(i)
	if k, ok := slices.BinarySearch(cols, int32(j)); ok {
		return vals[k]
	}
	return 0
}

// T returns the transpose (a view).
func (s *Sparse) T() mat.Matrix { return mat.Transpose{Matrix: s} }

// RowNZ returns the column indices and values of the non-zeros of row i
// (not copies).
func (s *Sparse) RowNZ(i int) (cols []int32, vals []float64) {
	lo, hi := s.start[i], s.start[i+1]
	return s.col[lo:hi], s.val[lo:hi]
}
