package implicit

import (
	"context"
	"fmt"
	"iter"
	"math"
	"sync"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// PairAcc accumulates, over documents of at least MinTokens tokens, the sum
// of c/ℓ (for M1) and the product of the per-document pair estimator with a
// fixed block Ω (d×Cols): Σ_doc (c(cᵀΩ) − diag(c)Ω)/(ℓ(ℓ−1)) (docs/MATH.md §3.4,
// eq. (9)). A pass costs O(nnz·Cols) (O(nnz·(Cols+z)) for a sparse Ω with z
// non-zeros per row) and d·Cols memory; E2 itself is never formed.
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
	// Float32 forms each batch's partial sums in float32 (the totals stay
	// float64): see real. Not part of the statistics.
	Float32 bool `json:"-"`

	bc    basisCache
	sp    sparseCache
	omega mat.Matrix // of the current pass
}

// NewPairAcc returns an empty accumulator for vocabulary size d and a block of
// cols columns.
func NewPairAcc(d, cols int) *PairAcc {
	return &PairAcc{D: d, Cols: cols, M1: make([]float64, d), E2Omega: make([]float64, d*cols)}
}

// pairPart is one worker's reduction of a batch.
type pairPart[F real] struct {
	*batch
	om  []F            // Ω in precision F when it is dense (shared by the parts of a pass)
	sp  *flatSparse[F] // Ω when it is sparse (shared)
	r   []F            // usable documents × Cols: cᵀΩ/n2
	tmp [][]F          // scratch rows of the commit, one per goroutine
	// part holds, per goroutine of the commit, a term's partial row in
	// float64 before it is folded into exact totals (nil without a fold).
	part [][]float64
}

// Add accumulates the documents of b; omega must be D×Cols and the same for
// every batch.
func (a *PairAcc) Add(b *stream.Docs, omega mat.Matrix) {
	_ = a.Pass(context.Background(), single(b), 1, omega, nil)
}

// single is a pass of the one batch b. The pass releases what it yields, so
// it yields a view of b that does not belong to b's pool: the caller keeps b.
func single(b *stream.Docs) func(context.Context) iter.Seq2[*stream.Docs, error] {
	view := &stream.Docs{Start: b.Start, Offsets: b.Offsets, Terms: b.Terms, Counts: b.Counts}
	return func(context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) { yield(view, nil) }
	}
}

// Pass accumulates one pass over docs with workers goroutines (see
// stream.Each). The sums do not depend on workers: batches are reduced
// concurrently and added in order. onBatch, if set, is called after each
// batch is added, one call at a time. A sparse Ω (a *mat.Dense with at most
// a quarter of its entries non-zero, or any matrix with a RowNZ(i) method
// such as sketch.Sparse) costs its non-zeros per document entry instead of
// Cols.
func (a *PairAcc) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, omega mat.Matrix, onBatch func(docs int)) error {
	return a.pass(ctx, docs, workers, omega, onBatch, nil)
}

// pass is Pass with each batch's commit folded into exact totals by fold
// (nil: plain totals; see Exact.Pass).
func (a *PairAcc) pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, omega mat.Matrix, onBatch func(docs int), fold *batchFold) error {
	a.begin(omega)
	if a.Float32 {
		return pairPass[float32](ctx, a, docs, workers, onBatch, fold)
	}
	return pairPass[float64](ctx, a, docs, workers, onBatch, fold)
}

func pairPass[F real](ctx context.Context, a *PairAcc, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(docs int), fold *batchFold) error {
	var om []F
	var sp *flatSparse[F]
	if a.sp.rows == nil {
		om = convert[F](nil, mat.DenseCopyOf(a.sp.dense).RawMatrix().Data)
	} else {
		sp = flatten[F](a.sp.rows, a.D)
	}
	var bufs batchBuffers
	exact := fold // nil: a plain pass
	defer bufs.release()
	return ordered(ctx, docs, workers, func() *pairPart[F] {
		p := &pairPart[F]{batch: bufs.get(), om: om, sp: sp, tmp: scratchRows[F](max(1, workers), a.Cols)}
		if exact != nil {
			p.part = scratchRows[float64](len(p.tmp), a.Cols)
		}
		return p
	},
		func(p *pairPart[F], b *stream.Docs) { p.compute(a, b) },
		func(p *pairPart[F]) { p.commit(a, exact) }, onBatch, fold)
}

// Fingerprint returns Fingerprint(omega) and remembers it for a's passes
// against the same matrix, which then do not hash it again.
func (a *PairAcc) Fingerprint(omega mat.Matrix) uint64 { return a.bc.fingerprint(omega) }

// begin checks omega and records its fingerprint and sparsity.
func (a *PairAcc) begin(omega mat.Matrix) {
	if r, c := omega.Dims(); r != a.D || c != a.Cols {
		panic(fmt.Sprintf("implicit: PairAcc(%d×%d) given Ω of %d×%d", a.D, a.Cols, r, c))
	}
	h := a.bc.fingerprint(omega)
	if a.Basis != 0 && a.Basis != h {
		panic("implicit: PairAcc.Add with a different Ω than earlier batches")
	}
	a.Basis = h
	a.sp.of(omega)
	a.omega = omega
}

// compute reduces b into p: R = diag(1/n2)·C·Ω row by row (the sums of c·R
// per term are formed by commit).
func (p *pairPart[F]) compute(a *PairAcc, b *stream.Docs) {
	p.prepare(b, a.D)
	cols := a.Cols
	p.r = grow(p.r, p.n*cols)
	if p.sp == nil {
		gather(&p.tm, p.n, p.om, cols, p.r, p.inv2)
		return
	}
	// Sparse Ω: z scalar updates per entry instead of a row of Cols, term
	// by term as in gather (each term's non-zeros are read once per batch).
	r := p.r[:p.n*cols]
	clear(r)
	sp, tm := p.sp, &p.tm
	for j, t := range tm.terms {
		lo, hi := sp.start[t], sp.start[t+1]
		cs, vals := sp.col[lo:hi], sp.val[lo:hi]
		for _, e := range tm.ent[tm.start[j]:tm.start[j+1]] {
			row := r[int(e.row)*cols : int(e.row+1)*cols]
			c := F(e.cnt)
			for q, col := range cs {
				row[col] += c * vals[q]
			}
		}
	}
	for i := range p.n {
		scal(F(sp.scale*p.inv2[i]), r[i*cols:(i+1)*cols])
	}
}

// flatSparse is a sparse Ω by rows in the precision of a pass's partials,
// read without an interface call per entry. When all its non-zeros have
// one magnitude v (a sparse sign matrix), val holds their signs and scale
// is v, so a document's sums of count·sign are exact integers.
type flatSparse[F real] struct {
	start, col []int32
	val        []F
	scale      float64
}

// flatten copies the non-zeros of the d rows of sp.
func flatten[F real](sp rowsNZ, d int) *flatSparse[F] {
	f := &flatSparse[F]{start: make([]int32, d+1), scale: 1}
	mag, same := 0.0, true
	for i := range d {
		cols, vals := sp.RowNZ(i)
		f.col = append(f.col, cols...)
		for _, v := range vals {
			if mag == 0 {
				mag = math.Abs(v)
			}
			same = same && math.Abs(v) == mag
		}
		f.start[i+1] = int32(len(f.col))
	}
	if same && mag != 0 {
		f.scale = mag
	}
	f.val = make([]F, 0, len(f.col))
	for i := range d {
		_, vals := sp.RowNZ(i)
		for _, v := range vals {
			f.val = append(f.val, F(v/f.scale))
		}
	}
	return f
}

// scatter forms, for each distinct term j of tm, the row Σ c·x[row] over
// its entries (rows of x have width w) and hands it to add(g, j, term, row).
// The terms are cut into len(tmp) ranges done concurrently, range g in its
// own scratch row tmp[g] (width w), so add may write the totals of its term
// without locking, and use scratch of its own indexed by g. The sums run in
// document order whatever the cut.
func scatter[F real](tm *termGroups, x []F, w int, tmp [][]F, add func(g, j int, t int32, row []F)) {
	one := func(g, lo, hi int, out []F) {
		for j := lo; j < hi; j++ {
			ent := tm.ent[tm.start[j]:tm.start[j+1]]
			row := int(ent[0].row)
			scaleTo(out, F(ent[0].cnt), x[row*w:(row+1)*w])
			for _, e := range ent[1:] {
				row := int(e.row)
				axpy(F(e.cnt), x[row*w:(row+1)*w], out)
			}
			add(g, j, tm.terms[j], out)
		}
	}
	n := len(tm.terms)
	if len(tmp) == 1 {
		one(0, 0, n, tmp[0][:w])
		return
	}
	var wg sync.WaitGroup
	for i, t := range tmp {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one(i, n*i/len(tmp), n*(i+1)/len(tmp), t[:w])
		}()
	}
	wg.Wait()
}

// scratchRows returns n rows of width w.
func scratchRows[F real](n, w int) [][]F {
	rows := make([][]F, n)
	for i := range rows {
		rows[i] = make([]F, w)
	}
	return rows
}

// commit adds p into the totals: Σ c·R per term, scattered in the commit
// (on several goroutines) rather than into a per-worker copy of every row
// the batch touches, which for a large vocabulary would rival the totals in
// size; and the diagonal term −diag(Σ c/n2)Ω. With a fold each term's
// partial row is formed apart and folded into the exact totals.
func (p *pairPart[F]) commit(a *PairAcc, fold *batchFold) {
	a.Counts.Merge(p.Counts)
	p.addScalars(fold, a.M1, nil, nil)
	w := a.Cols
	scatter(&p.tm, p.r, w, p.tmp, func(g, j int, t int32, row []F) {
		dst := a.E2Omega[int(t)*w : int(t+1)*w]
		if fold != nil {
			// The term's partial alone, in float64, then folded.
			dst = p.part[g]
			clear(dst)
		}
		addTo(dst, row)
		if sp := a.sp.rows; sp != nil {
			cols, vals := sp.RowNZ(int(t))
			for q, col := range cols {
				dst[col] -= p.g2[j] * vals[q]
			}
		} else {
			floats.AddScaled(dst, -p.g2[j], a.sp.dense.RawRowView(int(t)))
		}
		if fold != nil {
			addTotal(fold, a.E2Omega, int(t)*w, dst)
		}
	})
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
	raw := dst.RawMatrix()
	if raw.Rows != a.D || raw.Cols != a.Cols {
		panic(fmt.Sprintf("implicit: PairAcc.Mean into %d×%d, want %d×%d", raw.Rows, raw.Cols, a.D, a.Cols))
	}
	inv := 1 / float64(a.Docs)
	m1 = make([]float64, a.D)
	floats.ScaleTo(m1, inv, a.M1)
	for i := range a.D {
		floats.ScaleTo(raw.Data[i*raw.Stride:i*raw.Stride+a.Cols], inv, a.E2Omega[i*a.Cols:(i+1)*a.Cols])
	}
	return m1, nil
}

// rowsNZ is a matrix that lists the non-zeros of its rows.
type rowsNZ interface {
	RowNZ(i int) (cols []int32, vals []float64)
}

// sparseCache holds how a pass reads the last Ω seen: by its non-zeros when
// it lists them or is sparse enough (at most a quarter of its entries), else
// as a dense matrix.
type sparseCache struct {
	m     mat.Matrix
	rows  rowsNZ
	dense *mat.Dense
}

// sparseRows is a matrix in compressed sparse row form.
type sparseRows struct {
	start []int32
	col   []int32
	val   []float64
}

// RowNZ returns the non-zeros of row i.
func (s *sparseRows) RowNZ(i int) ([]int32, []float64) {
	lo, hi := s.start[i], s.start[i+1]
	return s.col[lo:hi], s.val[lo:hi]
}

func (c *sparseCache) of(m mat.Matrix) {
	if c.m == m {
		return
	}
	c.m, c.rows, c.dense = m, nil, nil
	if nz, ok := m.(rowsNZ); ok {
		c.rows = nz
		return
	}
	d, ok := m.(*mat.Dense)
	if !ok {
		d = mat.DenseCopyOf(m)
	}
	c.dense = d
	r, cols := d.Dims()
	nz := 0
	for i := range r {
		for _, v := range d.RawRowView(i) {
			if v != 0 {
				nz++
			}
		}
	}
	if nz*4 > r*cols {
		return
	}
	s := &sparseRows{start: make([]int32, r+1), col: make([]int32, 0, nz), val: make([]float64, 0, nz)}
	for i := range r {
		for j, v := range d.RawRowView(i) {
			if v != 0 {
				s.col = append(s.col, int32(j))
				s.val = append(s.val, v)
			}
		}
		s.start[i+1] = int32(len(s.col))
	}
	c.rows = s
}
