package implicit

import (
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// RowStats accumulates, for a fixed whitening matrix W (d×K), everything a
// third-moment pass needs except the per-document term Σ y⊗y⊗y/n3 (y = Wᵀc,
// n2 = ℓ(ℓ−1), n3 = ℓ(ℓ−1)(ℓ−2)): the aggregates that turn the per-document
// estimators of MATH §3.3–3.4 into d×K and K×K sums,
//
//	Z = Σ c_i y/n3 per term i (D×K), G3 = Σ c_i/n3, G2 = Σ c_i/n2,
//	YY = Σ y yᵀ/n2, M1 = Σ y/ℓ,
//
// and hands each batch's rows y and 1/n3 to the caller, who keeps their cube
// in another form: a tensor sketch (SketchAcc) or compressed rows on disk
// (RowAcc). Memory is O(d·K + K²) plus one batch, whatever the number of
// documents, and statistics of shards add up (Merge).
type RowStats struct {
	D int `json:"d"`
	K int `json:"k"`
	Counts
	Z  []float64 `json:"z"`
	G3 []float64 `json:"g3"`
	G2 []float64 `json:"g2"`
	YY []float64 `json:"yy"`
	M1 []float64 `json:"m1"`
	// Basis fingerprints W (0 before the first Add); Merge refuses
	// statistics of different bases.
	Basis uint64 `json:"basis"`

	y, ys, inv2, inv3 []float64
	rows              []int32
	tm                termMajor
	bc                basisCache
}

// NewRowStats returns empty statistics for vocabulary size d and k whitened
// dimensions.
func NewRowStats(d, k int) *RowStats {
	return &RowStats{
		D: d, K: k,
		Z:  make([]float64, d*k),
		G3: make([]float64, d), G2: make([]float64, d),
		YY: make([]float64, k*k),
		M1: make([]float64, k),
	}
}

// Add accumulates the documents of b whitened by w (D×K) and returns their
// whitened rows y (n×K row-major) and 1/n3 per row, for the n documents of at
// least MinTokens tokens in batch order. Both slices are scratch owned by a
// and valid until the next Add.
func (a *RowStats) Add(b *stream.Docs, w *mat.Dense) (y, inv3 []float64) {
	wr := w.RawMatrix()
	if wr.Rows != a.D || wr.Cols != a.K {
		panic(fmt.Sprintf("implicit: RowStats(d=%d, k=%d) given W of %d×%d", a.D, a.K, wr.Rows, wr.Cols))
	}
	if h := a.bc.fingerprint(w); a.Basis == 0 {
		a.Basis = h
	} else if a.Basis != h {
		panic("implicit: RowStats.Add with a different W than earlier batches")
	}
	k := a.K
	a.rows = slices.Grow(a.rows[:0], b.Len())[:b.Len()]
	n := 0
	for i := range b.Len() {
		if !a.count(b.Length(i)) {
			a.rows[i] = -1
			continue
		}
		a.rows[i] = int32(n)
		n++
	}
	a.y = growTo(a.y, n*k)
	a.inv2, a.inv3 = growTo(a.inv2, n), growTo(a.inv3, n)
	if n == 0 {
		return a.y, a.inv3
	}
	clear(a.y)
	a.tm.build(b, a.rows, a.D)
	tm := &a.tm
	// y = Wᵀc, gathered term by term so each row of W is read once per batch.
	for t := range a.D {
		wrow := wr.Data[t*wr.Stride : t*wr.Stride+k]
		for p := tm.start[t]; p < tm.start[t+1]; p++ {
			floats.AddScaled(a.y[int(tm.row[p])*k:int(tm.row[p]+1)*k], tm.cnt[p], wrow)
		}
	}
	for i := range b.Len() {
		if r := a.rows[i]; r >= 0 {
			l := float64(b.Length(i))
			a.inv2[r] = 1 / (l * (l - 1))
			a.inv3[r] = a.inv2[r] / (l - 2)
			floats.AddScaled(a.M1, 1/l, a.y[int(r)*k:int(r+1)*k])
		}
	}
	for t := range a.D {
		lo, hi := tm.start[t], tm.start[t+1]
		if lo == hi {
			continue
		}
		z := a.Z[t*k : (t+1)*k]
		for p := lo; p < hi; p++ {
			r, c := tm.row[p], tm.cnt[p]
			floats.AddScaled(z, c*a.inv3[r], a.y[int(r)*k:int(r+1)*k])
			a.G3[t] += c * a.inv3[r]
			a.G2[t] += c * a.inv2[r]
		}
	}
	a.ys = growTo(a.ys, n*k)
	for r := range n {
		floats.ScaleTo(a.ys[r*k:(r+1)*k], a.inv2[r], a.y[r*k:(r+1)*k])
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.ys, n, k), general(a.y, n, k), 1, general(a.YY, k, k))
	return a.y, a.inv3
}

// Merge adds o into a; both must have used the same whitening matrix.
func (a *RowStats) Merge(o *RowStats) error {
	if a.D != o.D || a.K != o.K {
		return fmt.Errorf("implicit: cannot merge row statistics (d=%d, k=%d) into (d=%d, k=%d)", o.D, o.K, a.D, a.K)
	}
	if err := mergeBasis(&a.Basis, o.Basis); err != nil {
		return err
	}
	a.Counts.Merge(o.Counts)
	for _, p := range [][2][]float64{{a.Z, o.Z}, {a.G3, o.G3}, {a.G2, o.G2}, {a.YY, o.YY}, {a.M1, o.M1}} {
		floats.Add(p[0], p[1])
	}
	return nil
}

// Pair returns the whitened first and second moments averaged over the used
// documents, M̃1 = WᵀM̂1 and Ẽ2 = WᵀÊ2W = (YY − Wᵀ diag(G2) W)/N: what a model
// needs for its corrections (Correction) and to re-whiten exactly.
func (a *RowStats) Pair(w *mat.Dense) (m1 []float64, e2 *mat.SymDense, err error) {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: Pair(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.Docs == 0 {
		return nil, nil, ErrNoDocs
	}
	k := a.K
	var gw, s mat.Dense
	gw.CloneFrom(w)
	for i, g := range a.G2 {
		row := gw.RawRowView(i)
		floats.Scale(g, row)
	}
	s.Mul(w.T(), &gw)
	inv := 1 / float64(a.Docs)
	e2 = mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			v := (a.YY[i*k+j]+a.YY[j*k+i])/2 - (s.At(i, j)+s.At(j, i))/2
			e2.SetSym(i, j, v*inv)
		}
	}
	m1 = make([]float64, k)
	floats.ScaleTo(m1, inv, a.M1)
	return m1, e2, nil
}

// aggregated returns the operator of the terms of Ê3(W,W,W)(I,θ,θ) that
// were summed over documents into Z and G3 (MATH §3.3):
// [Wᵀ(2 G3⊙u⊙u − 2 u⊙(Zθ)) − Zᵀ(u⊙u)]/N with u = Wθ. It is an Operator
// over no cached rows, so the row terms can come from anywhere else.
func (a *RowStats) aggregated(w *mat.Dense) (*Operator, error) {
	ta := &TripleAcc{D: a.D, K: a.K, Counts: a.Counts, Z: a.Z, G3: a.G3, KeepRows: true}
	return ta.Operator(w)
}
