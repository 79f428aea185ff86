package implicit

import (
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// PairAcc accumulates, over documents of at least MinTokens tokens, the sum of
// c/ℓ (for M1) and the product of the per-document pair estimator with a fixed
// block Ω (d×Cols): Σ_doc (c(cᵀΩ) − diag(c)Ω)/(ℓ(ℓ−1)) (MATH §3.4, eq. (9)).
// It costs O(nnz·Cols) per pass and d·Cols memory; E2 itself is never formed.
type PairAcc struct {
	D    int `json:"d"`
	Cols int `json:"cols"`
	Counts
	// M1 is Σ_doc c/ℓ (length D).
	M1 []float64 `json:"m1"`
	// E2Omega is Σ_doc (c(cᵀΩ) − diag(c)Ω)/(ℓ(ℓ−1)), D×Cols row-major.
	E2Omega []float64 `json:"e2_omega"`
	// Basis fingerprints the Ω the sums were taken against (0 before the
	// first Add); Merge refuses statistics of different bases.
	Basis uint64 `json:"basis"`

	r, inv2 []float64 // scratch: cᵀΩ/n2 and 1/n2 per usable document
	rows    []int32   // scratch: row of each document among the usable ones
	tm      termMajor
	bc      basisCache
}

// NewPairAcc returns an empty accumulator for vocabulary size d and a block of
// cols columns.
func NewPairAcc(d, cols int) *PairAcc {
	return &PairAcc{D: d, Cols: cols, M1: make([]float64, d), E2Omega: make([]float64, d*cols)}
}

// Add accumulates the documents of b; omega must be D×Cols. Per batch it
// gathers R = diag(1/n2)·C·Ω (one row per document), then scatters CᵀR and
// the diagonal term term by term (see termMajor).
func (a *PairAcc) Add(b *stream.Docs, omega *mat.Dense) {
	if r, c := omega.Dims(); r != a.D || c != a.Cols {
		panic(fmt.Sprintf("implicit: PairAcc(%d×%d) given Ω of %d×%d", a.D, a.Cols, r, c))
	}
	a.setBasis(a.bc.fingerprint(omega))
	om := omega.RawMatrix()
	cols := a.Cols
	a.rows = slices.Grow(a.rows[:0], b.Len())[:b.Len()]
	n := 0
	for i := range b.Len() {
		l := b.Length(i)
		if !a.count(l) {
			a.rows[i] = -1
			continue
		}
		a.rows[i] = int32(n)
		n++
	}
	a.r = growTo(a.r, n*cols)
	clear(a.r)
	a.inv2 = growTo(a.inv2, n)
	for i := range b.Len() {
		row := a.rows[i]
		if row < 0 {
			continue
		}
		terms, counts := b.Doc(i)
		l := float64(b.Length(i))
		inv1 := 1 / l
		for j, t := range terms {
			a.M1[t] += float64(counts[j]) * inv1
		}
		a.inv2[row] = 1 / (l * (l - 1))
	}
	// Both the gather R = C·Ω and the scatter CᵀR go term by term, so each row
	// of Ω and of the accumulator is read once per batch, in order.
	a.tm.build(b, a.rows, a.D)
	tm := &a.tm
	for t := range a.D {
		lo, hi := tm.start[t], tm.start[t+1]
		omRow := om.Data[t*om.Stride : t*om.Stride+cols]
		for p := lo; p < hi; p++ {
			row, c := tm.row[p], tm.cnt[p]
			floats.AddScaled(a.r[int(row)*cols:int(row+1)*cols], c*a.inv2[row], omRow)
		}
	}
	for t := range a.D {
		lo, hi := tm.start[t], tm.start[t+1]
		if lo == hi {
			continue
		}
		dst := a.E2Omega[t*cols : (t+1)*cols]
		diag := 0.0
		for p := lo; p < hi; p++ {
			row, c := tm.row[p], tm.cnt[p]
			floats.AddScaled(dst, c, a.r[int(row)*cols:int(row+1)*cols])
			diag += c * a.inv2[row]
		}
		floats.AddScaled(dst, -diag, om.Data[t*om.Stride:t*om.Stride+cols])
	}
}

// Merge adds o into a; both must have been built with the same Ω.
func (a *PairAcc) Merge(o *PairAcc) error {
	if a.D != o.D || a.Cols != o.Cols {
		return fmt.Errorf("implicit: cannot merge pair statistics of %d×%d into %d×%d", o.D, o.Cols, a.D, a.Cols)
	}
	if err := mergeBasis(&a.Basis, o.Basis); err != nil {
		return err
	}
	a.Counts.Merge(o.Counts)
	floats.Add(a.M1, o.M1)
	floats.Add(a.E2Omega, o.E2Omega)
	return nil
}

// Mean returns the averages over used documents: M̂1 (length D) and Ê2·Ω in dst
// (D×Cols), which may be E2Omega itself (scaled in place). It fails when no
// document was usable.
func (a *PairAcc) Mean(dst *mat.Dense) (m1 []float64, err error) {
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	inv := 1 / float64(a.Docs)
	m1 = make([]float64, a.D)
	floats.ScaleTo(m1, inv, a.M1)
	raw := dst.RawMatrix()
	if raw.Rows != a.D || raw.Cols != a.Cols {
		panic(fmt.Sprintf("implicit: PairAcc.Mean into %d×%d, want %d×%d", raw.Rows, raw.Cols, a.D, a.Cols))
	}
	for i := range a.D {
		floats.ScaleTo(raw.Data[i*raw.Stride:i*raw.Stride+a.Cols], inv, a.E2Omega[i*a.Cols:(i+1)*a.Cols])
	}
	return m1, nil
}

func (a *PairAcc) setBasis(h uint64) {
	if a.Basis != 0 && a.Basis != h {
		panic("implicit: PairAcc.Add with a different Ω than earlier batches")
	}
	a.Basis = h
}
