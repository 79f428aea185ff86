package implicit

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// TripleAcc accumulates the whitened pair and triple statistics of a pass for a
// fixed whitening matrix W (d×K), with y = Wᵀc per document and n2 = ℓ(ℓ−1),
// n3 = ℓ(ℓ−1)(ℓ−2). The per-document estimators of docs/MATH.md §3.4 are split into
// terms that add over documents first:
//
//	Σ y⊗y⊗y/n3          → Y3, batched as GEMMs over the documents of a batch;
//	Σ Σᵢ cᵢ ωᵢ⊗3/n3      → Σᵢ G3ᵢ ωᵢ⊗3 with G3ᵢ = Σ cᵢ/n3 (ωᵢ = row i of W);
//	Σ Sym₃(y, S)/n3      → Σᵢ Sym₃(Zᵢ, ωᵢωᵢᵀ) with Zᵢ = Σ cᵢ y/n3;
//	Σ (c yᵀ − diag(c)W)/n2 = Ê2·W (unaveraged) → Z2 − diag(G2)W with
//	                        Z2ᵢ = Σ cᵢ y/n2, G2ᵢ = Σ cᵢ/n2; WᵀÊ2W follows;
//
// so a pass costs O(nnz·K + n·K³/6) and the statistics take O(d·K + K³)
// memory whatever the number of documents. The terms in W are formed once,
// by Moments. Ê2·W (d×K) lets a model map whitened results back to the
// vocabulary through the measured second moment rather than through W alone.
type TripleAcc struct {
	D int `json:"d"`
	K int `json:"k"`
	Counts
	// Y3 is Σ y_a y_b y_c / n3 as a K × K(K+1)/2 matrix (row a, column the pair
	// b ≤ c in lexicographic order). Only entries with b ≥ a are meaningful.
	Y3 []float64 `json:"y3"`
	// Z and Z2 are Σ c_i y / n3 and Σ c_i y / n2 per term i, D×K row-major.
	Z  []float64 `json:"z"`
	Z2 []float64 `json:"z2"`
	// G3, G2 and M1 are Σ c_i / n3, Σ c_i / n2 and Σ c_i / ℓ per term i.
	G3 []float64 `json:"g3"`
	G2 []float64 `json:"g2"`
	M1 []float64 `json:"m1"`
	// Basis fingerprints the W the statistics were whitened with (0 before
	// the first Add); Merge refuses statistics of different bases.
	Basis uint64 `json:"basis"`

	// KeepRows keeps every document's y and 1/n3 (Rows, InvN3), in document
	// order, for the implicit operator; memory then grows with the number of
	// documents.
	KeepRows bool      `json:"keep_rows,omitempty"`
	Rows     []float64 `json:"rows,omitempty"`
	InvN3    []float64 `json:"inv_n3,omitempty"`
	// Float32 forms each batch's partial sums in float32 (the totals stay
	// float64): see real. Not part of the statistics.
	Float32 bool `json:"-"`
	// NoCubes leaves Y3 empty (nil, never allocated) and skips Σ y⊗y⊗y/n3,
	// the O(n·K³/6) part of a pass and its K×K(K+1)/2 memory, for
	// representations that keep the rows' cubes elsewhere (see OnRows).
	// Moments then returns no E3. Set it through NewTripleAccNoCubes.
	NoCubes bool `json:"no_cubes,omitempty"`
	// NoPair leaves Z2 empty (nil, never allocated) and skips Σ c·y/n2, a
	// third of a pass's work per entry, for a W inside the span of an
	// earlier pass that measured Ê2 on that span (the power pass of a fit):
	// the caller then gives Ê2·W to MomentsGiven. Set it through SkipPair.
	NoPair bool `json:"no_pair,omitempty"`
	// Cubes, when not every document (DocSample.All), is the sample of
	// the documents whose cubes Y3 sums, each weighted by 1/Cubes.Rate:
	// an unbiased estimate of the sum over all of them at that share of
	// the pass's O(n·K³/6) work. Every other sum runs over all the
	// documents. Set it before the first Add; statistics of different
	// samples do not merge.
	Cubes DocSample `json:"cubes,omitzero"`
	// CubeSq, with a sampled Cubes, holds (length 1) the sample's
	// Σ ‖y⊗y⊗y/(n3·rate)‖²_F, from which CubeStdErr estimates the error the
	// sample adds; nil with every document.
	CubeSq []float64 `json:"cube_sq,omitempty"`
	// Presampled takes every document a pass gives as one of Cubes'
	// sample, without the membership test: the documents are the sample
	// already, kept by an earlier pass over all of them (a fit that sums
	// the cubes from memory after a pass that could not: Rebase). Each is
	// weighed 1/Cubes.Rate as in a pass over all. Not part of the
	// statistics.
	Presampled bool `json:"-"`
	// OnRows, when set, is called once per batch, in batch order whatever
	// the number of workers, with the whitened rows y = Wᵀc of the batch's
	// usable documents (n×K row-major, in document order) and their 1/n3
	// (length n). The slices are valid only during the call. A non-nil error
	// stops the pass, which returns it. With Float32 the rows are the float32
	// partials converted to float64. Not part of the statistics.
	OnRows func(y, inv3 []float64) error `json:"-"`

	bc basisCache
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
		Z:  make([]float64, d*k), Z2: make([]float64, d*k),
		G3: make([]float64, d), G2: make([]float64, d), M1: make([]float64, d),
	}
}

// NewTripleAccNoCubes returns empty statistics without the cube sums Y3
// (NoCubes): everything else a third-moment pass gathers, O(d·K) memory.
func NewTripleAccNoCubes(d, k int) *TripleAcc {
	return &TripleAcc{
		D: d, K: k, NoCubes: true,
		Z: make([]float64, d*k), Z2: make([]float64, d*k),
		G3: make([]float64, d), G2: make([]float64, d), M1: make([]float64, d),
	}
}

// SkipPair makes a (empty) statistics without the pair sums Z2 (NoPair).
func (a *TripleAcc) SkipPair() {
	if a.Docs != 0 || a.Skipped != 0 {
		panic("implicit: TripleAcc.SkipPair after documents were added")
	}
	a.NoPair, a.Z2 = true, nil
}

// ysWidth is the width of a batch's rows of [y/n3 | y/n2], or of y/n3
// alone without the pair sums.
func (a *TripleAcc) ysWidth() int {
	if a.NoPair {
		return a.K
	}
	return 2 * a.K
}

// triplePart is one worker's reduction of a batch.
type triplePart[F real] struct {
	*batch
	w   []F       // W in precision F (shared by the parts of a pass)
	y   []F       // usable documents × K: Wᵀc
	y64 []float64 // y in float64 for OnRows, when F is float32
	ys  []F       // usable documents × 2K: [y/n3 | y/n2] (× K, y/n3, with NoPair)
	y3  []F       // the batch's Y3
	kr  []F       // Khatri–Rao scratch
	ysC []F       // the cube sample's rows of y/(n3·rate) and of y
	yC  []F
	sq  float64 // the cube sample's Σ ‖y⊗3/(n3·rate)‖²_F
	tmp [][]F   // scratch rows of the commit, one per goroutine
}

// Add accumulates the documents of b whitened by w (D×K), the same for
// every batch. It returns OnRows's error.
func (a *TripleAcc) Add(b *stream.Docs, w *mat.Dense) error {
	return a.Pass(context.Background(), single(b), 1, w, nil)
}

// Pass accumulates one pass over docs with workers goroutines; the sums do
// not depend on workers (see PairAcc.Pass). It returns the first error of
// docs or of OnRows, after which the statistics are incomplete.
func (a *TripleAcc) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, w *mat.Dense, onBatch func(docs int)) error {
	return a.pass(ctx, docs, workers, w, onBatch, nil)
}

// Fingerprint returns Fingerprint(w) and remembers it for a's passes
// whitened by the same matrix, which then do not hash it again.
func (a *TripleAcc) Fingerprint(w mat.Matrix) uint64 { return a.bc.fingerprint(w) }

// pass is Pass with each batch's commit folded into exact totals by fold
// (nil: plain totals; see Exact.Pass).
func (a *TripleAcc) pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, w *mat.Dense, onBatch func(docs int), fold *batchFold) error {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: TripleAcc(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.NoCubes != (a.Y3 == nil) {
		panic("implicit: TripleAcc.NoCubes set without NewTripleAccNoCubes (or Y3 missing)")
	}
	if a.NoPair != (a.Z2 == nil) {
		panic("implicit: TripleAcc.NoPair set without SkipPair (or Z2 missing)")
	}
	a.sampleSums()
	if h := a.bc.fingerprint(w); a.Basis == 0 {
		a.Basis = h
	} else if a.Basis != h {
		panic("implicit: TripleAcc.Add with a different W than earlier batches")
	}
	if a.Float32 {
		return triplePass(ctx, a, docs, workers, convert[float32](nil, contiguous(w)), onBatch, fold)
	}
	return triplePass(ctx, a, docs, workers, contiguous(w), onBatch, fold)
}

func triplePass[F real](ctx context.Context, a *TripleAcc, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, w []F, onBatch func(docs int), fold *batchFold) error {
	// An OnRows error cancels the pass; commits already waiting their turn
	// then skip their batch.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var hookErr error
	done := onBatch
	if onBatch != nil {
		done = func(n int) {
			if hookErr == nil {
				onBatch(n)
			}
		}
	}
	var bufs batchBuffers
	exact := fold // nil: a plain pass
	defer bufs.release()
	err := ordered(ctx, docs, workers, func() *triplePart[F] {
		return &triplePart[F]{batch: bufs.get(), w: w, tmp: scratchRows[F](max(1, workers), a.ysWidth())}
	},
		func(p *triplePart[F], b *stream.Docs) { p.compute(a, b) },
		func(p *triplePart[F]) {
			if hookErr != nil {
				return
			}
			if hookErr = p.commit(a, exact); hookErr != nil {
				cancel(hookErr)
			}
		}, done, fold)
	if hookErr != nil {
		return hookErr
	}
	return err
}

// compute reduces b into p.
func (p *triplePart[F]) compute(a *TripleAcc, b *stream.Docs) {
	p.prepare(b, a.D)
	k, n := a.K, p.n
	p.y = grow(p.y, n*k)
	gather(&p.tm, n, p.w, k, p.y, nil)
	ws := a.ysWidth()
	p.ys = grow(p.ys, n*ws)
	for r := range n {
		y := p.y[r*k : (r+1)*k]
		scaleTo(p.ys[r*ws:r*ws+k], F(p.inv3[r]), y)
		if !a.NoPair {
			scaleTo(p.ys[r*ws+k:(r+1)*ws], F(p.inv2[r]), y)
		}
	}
	if a.OnRows != nil {
		if _, ok := any(p.y).([]float32); ok {
			p.y64 = growTo(p.y64, n*k)
			for i, v := range p.y {
				p.y64[i] = float64(v)
			}
		}
	}
	if a.NoCubes {
		return
	}
	p.y3 = grow(p.y3, k*pairs(k))
	clear(p.y3)
	if a.Cubes.All() {
		p.kr = addCubes(p.y3, p.ys, ws, p.y, nil, n, k, p.kr)
		return
	}
	keeps, inv := a.Cubes.Keeps(), 1/a.Cubes.Rate
	if a.Presampled {
		keeps = func(int64) bool { return true }
	}
	p.ysC, p.yC = grow(p.ysC, n*k), grow(p.yC, n*k)
	m := 0
	p.sq = 0
	for i, r := range p.docRow[:b.Len()] {
		if r < 0 || !keeps(b.Start+int64(i)) {
			continue
		}
		y := p.y[int(r)*k : int(r+1)*k]
		copy(p.yC[m*k:(m+1)*k], y)
		s := p.inv3[r] * inv
		scaleTo(p.ysC[m*k:(m+1)*k], F(s), y)
		yy := 0.0 // ‖y‖², so that ‖s·y⊗3‖²_F = s²‖y‖⁶
		for _, v := range y {
			yy += float64(v) * float64(v)
		}
		p.sq += s * s * yy * yy * yy
		m++
	}
	p.kr = addCubes(p.y3, p.ysC, k, p.yC, nil, m, k, p.kr)
}

// commit adds p into the totals; the [Z | Z2] rows of the batch's terms are
// scattered here (see PairAcc's commit), exactly with a fold. It returns
// OnRows's error.
func (p *triplePart[F]) commit(a *TripleAcc, fold *batchFold) error {
	k := a.K
	a.Counts.Merge(p.Counts)
	p.addScalars(fold, a.M1, a.G2, a.G3)
	scatter(&p.tm, p.ys, a.ysWidth(), p.tmp, func(_, _ int, t int32, row []F) {
		addTotal(fold, a.Z, int(t)*k, row[:k])
		if !a.NoPair {
			addTotal(fold, a.Z2, int(t)*k, row[k:2*k])
		}
	})
	if !a.NoCubes {
		addTotal(fold, a.Y3, 0, p.y3[:len(a.Y3)])
	}
	if a.CubeSq != nil {
		addTotal(fold, a.CubeSq, 0, []float64{p.sq})
	}
	if a.KeepRows {
		for _, v := range p.y[:p.n*k] {
			a.Rows = append(a.Rows, float64(v))
		}
		a.InvN3 = append(a.InvN3, p.inv3...)
	}
	if a.OnRows != nil {
		y, ok := any(p.y).([]float64)
		if !ok {
			y = p.y64
		}
		return a.OnRows(y[:p.n*k], p.inv3[:p.n])
	}
	return nil
}

// addCubes adds Σ_r s_r ⊗ x_r ⊗ x_r to dst (K × K(K+1)/2, rows a, pairs b ≤ c
// with b ≥ a's block start) for the n rows of s (stride sStride) and x (n×k),
// or, with v non-nil (n×k), Σ_r s_r ⊗ (x_r⊗v_r + v_r⊗x_r), through
// Khatri–Rao chunks and GEMMs. It returns the (possibly grown) scratch.
func addCubes[F real](dst, s []F, sStride int, x, v []F, n, k int, kr []F) []F {
	p := pairs(k)
	kr = grow(kr, min(n, chunkRows)*p)
	for r0 := 0; r0 < n; r0 += chunkRows {
		m := min(chunkRows, n-r0)
		var vr []F
		if v != nil {
			vr = v[r0*k:]
		}
		khatriRao(kr, x[r0*k:], vr, m, k)
		for a0 := 0; a0 < k; a0 += tripleBlock {
			a1 := min(a0+tripleBlock, k)
			off := pairOffset(a0, k)
			gemmTN(a1-a0, p-off, m, s[r0*sStride+a0:], sStride, kr[off:], p, dst[a0*p+off:], p)
		}
	}
	return kr
}

// khatriRao sets row r of kr (width K(K+1)/2) to the products x_b·x_c, b ≤ c,
// of row r of x (n rows of width k), or with v non-nil to the symmetric
// products x_b·v_c + v_b·x_c.
func khatriRao[F real](kr, x, v []F, n, k int) {
	p := pairs(k)
	for r := range n {
		row := x[r*k : (r+1)*k]
		out := kr[r*p : (r+1)*p]
		q := 0
		if v == nil {
			// A plain loop: the segments average k/2 values, too short
			// for a call per segment (copy and scal) to pay; the same
			// products, rounded once each.
			for b, xb := range row {
				seg := out[q : q+k-b]
				src := row[b:][:len(seg)]
				for i := range seg {
					seg[i] = xb * src[i]
				}
				q += k - b
			}
			continue
		}
		vrow := v[r*k : (r+1)*k]
		for b := range k {
			scaleTo(out[q:q+k-b], row[b], vrow[b:])
			axpy(vrow[b], row[b:], out[q:q+k-b])
			q += k - b
		}
	}
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
	if a.NoCubes != o.NoCubes {
		return fmt.Errorf("implicit: cannot merge triple statistics with and without the cube sums Y3")
	}
	if a.NoPair != o.NoPair {
		return fmt.Errorf("implicit: cannot merge triple statistics with and without the pair sums Z2")
	}
	if a.Cubes.All() != o.Cubes.All() || !a.Cubes.All() && a.Cubes != o.Cubes {
		return fmt.Errorf("%w: triple statistics whose cubes sum other samples of the documents (%+v, %+v)", statsfile.ErrIncompatible, a.Cubes, o.Cubes)
	}
	if err := mergeBasis(&a.Basis, o.Basis); err != nil {
		return err
	}
	a.Counts.Merge(o.Counts)
	for _, s := range [][2][]float64{{a.Y3, o.Y3}, {a.CubeSq, o.CubeSq}, {a.Z, o.Z}, {a.Z2, o.Z2}, {a.G3, o.G3}, {a.G2, o.G2}, {a.M1, o.M1}} {
		floats.Add(s[0], s[1])
	}
	a.Rows = append(a.Rows, o.Rows...)
	a.InvN3 = append(a.InvN3, o.InvN3...)
	return nil
}

func growTo(s []float64, n int) []float64 { return grow(s, n) }

// sampleSums allocates CubeSq when the cubes are a sample's.
func (a *TripleAcc) sampleSums() {
	if a.CubeSq == nil && !a.NoCubes && !a.Cubes.All() {
		a.CubeSq = make([]float64, 1)
	}
}

// CubeStdErr is the standard error, in the Frobenius norm, that the cube
// sample adds to Ê3 (the averaged cubes Moments returns): each document
// is in the sample with probability Rate independently of the others (a
// hash of its index), so the weighted sample's sum has variance
// Σ (1−Rate)/Rate·‖cube‖², estimated from the sample's Σ ‖cube/Rate‖²
// (CubeSq) times (1−Rate). 0 with every document.
func (a *TripleAcc) CubeStdErr() float64 {
	if len(a.CubeSq) == 0 || a.Docs == 0 {
		return 0
	}
	return math.Sqrt((1-a.Cubes.Rate)*math.Max(a.CubeSq[0], 0)) / float64(a.Docs)
}

// contiguous returns the entries of m row by row: m's own storage when its
// rows are adjacent (no copy of a large W), else a copy.
func contiguous(m *mat.Dense) []float64 {
	raw := m.RawMatrix()
	if raw.Stride == raw.Cols {
		return raw.Data[:raw.Rows*raw.Cols]
	}
	return mat.DenseCopyOf(m).RawMatrix().Data
}
