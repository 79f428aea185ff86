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

// TripleAcc accumulates the whitened pair and triple statistics of a pass for a
// fixed whitening matrix W (d×K), with y = Wᵀc per document and n2 = ℓ(ℓ−1),
// n3 = ℓ(ℓ−1)(ℓ−2). The per-document estimators of MATH §3.4 are split into
// terms that add over documents first:
//
//	Σ y⊗y⊗y/n3          → Y3, batched as GEMMs over the documents of a batch;
//	Σ Σᵢ cᵢ ωᵢ⊗3/n3      → Σᵢ G3ᵢ ωᵢ⊗3 with G3ᵢ = Σ cᵢ/n3 (ωᵢ = row i of W);
//	Σ Sym₃(y, S)/n3      → Σᵢ Sym₃(Zᵢ, ωᵢωᵢᵀ) with Zᵢ = Σ cᵢ y/n3;
//	Σ (yyᵀ − S)/n2       → YY − Wᵀ diag(G2) W with G2ᵢ = Σ cᵢ/n2;
//
// so a pass costs O(nnz·K + n·K³/6) and the statistics take O(d·K + K³) memory
// whatever the number of documents. The terms in W are formed once, by Moments.
type TripleAcc struct {
	D int `json:"d"`
	K int `json:"k"`
	Counts
	// Y3 is Σ y_a y_b y_c / n3 as a K × K(K+1)/2 matrix (row a, column the pair
	// b ≤ c in lexicographic order). Only entries with b ≥ a are meaningful.
	Y3 []float64 `json:"y3"`
	// Z is Σ c_i y / n3 per term i, D×K row-major.
	Z []float64 `json:"z"`
	// G3 and G2 are Σ c_i / n3 and Σ c_i / n2 per term i.
	G3 []float64 `json:"g3"`
	G2 []float64 `json:"g2"`
	// YY is Σ y yᵀ / n2, K×K row-major.
	YY []float64 `json:"yy"`
	// M1 is Σ y / ℓ (the whitened first moment, summed).
	M1 []float64 `json:"m1"`
	// Basis fingerprints the W the statistics were whitened with (0 before
	// the first Add); Merge refuses statistics of different bases.
	Basis uint64 `json:"basis"`

	// KeepRows keeps every document's y and 1/n3 (Rows, InvN3) for the
	// implicit operator; memory then grows with the number of documents.
	KeepRows bool      `json:"keep_rows,omitempty"`
	Rows     []float64 `json:"rows,omitempty"`
	InvN3    []float64 `json:"inv_n3,omitempty"`

	y, ys, kr, inv2, inv3 []float64 // per-batch scratch
	rows                  []int32
	tm                    termMajor
	bc                    basisCache
}

// pairs is the number of pairs b ≤ c among k indices.
func pairs(k int) int { return k * (k + 1) / 2 }

// pairOffset is the position of the first pair (b, b) of row b in the
// lexicographic order of pairs b ≤ c.
func pairOffset(b, k int) int { return b*k - b*(b-1)/2 }

// tripleBlock is the number of rows a of Y3 updated by one GEMM: each block
// only touches pairs (b, c) with b ≥ its first row, which saves about two
// thirds of the work of a full K × K(K+1)/2 product.
const tripleBlock = 8

// chunkRows bounds the rows of the Khatri–Rao scratch (chunkRows × K(K+1)/2).
const chunkRows = 64

// NewTripleAcc returns empty statistics for vocabulary size d and k whitened
// dimensions.
func NewTripleAcc(d, k int) *TripleAcc {
	return &TripleAcc{
		D: d, K: k,
		Y3: make([]float64, k*pairs(k)),
		Z:  make([]float64, d*k),
		G3: make([]float64, d), G2: make([]float64, d),
		YY: make([]float64, k*k),
		M1: make([]float64, k),
	}
}

// Add accumulates the documents of b whitened by w (D×K).
func (a *TripleAcc) Add(b *stream.Docs, w *mat.Dense) {
	wr := w.RawMatrix()
	if wr.Rows != a.D || wr.Cols != a.K {
		panic(fmt.Sprintf("implicit: TripleAcc(d=%d, k=%d) given W of %d×%d", a.D, a.K, wr.Rows, wr.Cols))
	}
	if h := a.bc.fingerprint(w); a.Basis == 0 {
		a.Basis = h
	} else if a.Basis != h {
		panic("implicit: TripleAcc.Add with a different W than earlier batches")
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
	if n == 0 {
		return
	}
	a.y = growTo(a.y, n*k)
	clear(a.y)
	a.inv2, a.inv3 = growTo(a.inv2, n), growTo(a.inv3, n)
	// Gather y = Wᵀc term by term (each row of W read once per batch, in order).
	a.tm.build(b, a.rows, a.D)
	tm := &a.tm
	for t := range a.D {
		wrow := wr.Data[t*wr.Stride : t*wr.Stride+k]
		for p := tm.start[t]; p < tm.start[t+1]; p++ {
			row := tm.row[p]
			floats.AddScaled(a.y[int(row)*k:int(row+1)*k], tm.cnt[p], wrow)
		}
	}
	for i := range b.Len() {
		row := a.rows[i]
		if row < 0 {
			continue
		}
		fl := float64(b.Length(i))
		inv2 := 1 / (fl * (fl - 1))
		a.inv2[row], a.inv3[row] = inv2, inv2/(fl-2)
		floats.AddScaled(a.M1, 1/fl, a.y[int(row)*k:int(row+1)*k])
	}
	// Term-major scatter of Z, G3 and G2.
	for t := range a.D {
		lo, hi := tm.start[t], tm.start[t+1]
		if lo == hi {
			continue
		}
		z := a.Z[t*k : (t+1)*k]
		var g2, g3 float64
		for p := lo; p < hi; p++ {
			row, c := tm.row[p], tm.cnt[p]
			w3 := c * a.inv3[row]
			floats.AddScaled(z, w3, a.y[int(row)*k:int(row+1)*k])
			g3 += w3
			g2 += c * a.inv2[row]
		}
		a.G3[t] += g3
		a.G2[t] += g2
	}
	if a.KeepRows {
		a.Rows = append(a.Rows, a.y...)
		a.InvN3 = append(a.InvN3, a.inv3...)
	}
	a.ys = growTo(a.ys, n*k)
	for r := range n {
		floats.ScaleTo(a.ys[r*k:(r+1)*k], a.inv2[r], a.y[r*k:(r+1)*k])
	}
	yy := blas64.General{Rows: k, Cols: k, Stride: k, Data: a.YY}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.ys, n, k), general(a.y, n, k), 1, yy)
	for r := range n {
		floats.ScaleTo(a.ys[r*k:(r+1)*k], a.inv3[r], a.y[r*k:(r+1)*k])
	}
	a.kr = addCubes(a.Y3, a.ys, a.y, n, k, a.kr)
}

// addCubes adds Σ_r s_r ⊗ x_r ⊗ x_r to dst (K × K(K+1)/2, rows a, pairs b ≤ c
// with b ≥ a's block start) for the n rows of s and x (n×k), through
// Khatri–Rao chunks and GEMMs. It returns the (possibly grown) scratch.
func addCubes(dst, s, x []float64, n, k int, kr []float64) []float64 {
	p := pairs(k)
	kr = growTo(kr, min(n, chunkRows)*p)
	for r0 := 0; r0 < n; r0 += chunkRows {
		m := min(chunkRows, n-r0)
		for r := range m {
			row := x[(r0+r)*k : (r0+r+1)*k]
			out := kr[r*p : (r+1)*p]
			q := 0
			for b := range k {
				floats.ScaleTo(out[q:q+k-b], row[b], row[b:])
				q += k - b
			}
		}
		for a0 := 0; a0 < k; a0 += tripleBlock {
			a1 := min(a0+tripleBlock, k)
			off := pairOffset(a0, k)
			sa := blas64.General{Rows: m, Cols: a1 - a0, Stride: k, Data: s[r0*k+a0:]}
			kb := blas64.General{Rows: m, Cols: p - off, Stride: p, Data: kr[off:]}
			c := blas64.General{Rows: a1 - a0, Cols: p - off, Stride: p, Data: dst[a0*p+off:]}
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, sa, kb, 1, c)
		}
	}
	return kr
}

// Merge adds o into a. Both must have used the same whitening matrix; rows
// kept by o are appended after a's, so merging shards in order keeps the rows
// in document order.
func (a *TripleAcc) Merge(o *TripleAcc) error {
	if a.D != o.D || a.K != o.K {
		return fmt.Errorf("implicit: cannot merge triple statistics (d=%d, k=%d) into (d=%d, k=%d)", o.D, o.K, a.D, a.K)
	}
	if a.KeepRows != o.KeepRows {
		return fmt.Errorf("implicit: cannot merge triple statistics with and without kept rows")
	}
	if err := mergeBasis(&a.Basis, o.Basis); err != nil {
		return err
	}
	a.Counts.Merge(o.Counts)
	floats.Add(a.Y3, o.Y3)
	floats.Add(a.Z, o.Z)
	floats.Add(a.G3, o.G3)
	floats.Add(a.G2, o.G2)
	floats.Add(a.YY, o.YY)
	floats.Add(a.M1, o.M1)
	a.Rows = append(a.Rows, o.Rows...)
	a.InvN3 = append(a.InvN3, o.InvN3...)
	return nil
}

func general(data []float64, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data[:r*c]}
}

func growTo(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
