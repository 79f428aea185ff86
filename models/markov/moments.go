package markov

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// pairStats are the first pass's sums: point moments V1, V2 and the within-set
// pair moment C2 (MATH §3.2), as averages.
type pairStats struct {
	rows, sets int64
	v1         []float64     // E[x]
	v2         *mat.SymDense // E[xxᵀ]
	c2         *mat.SymDense // average over sets of Σ_{s≠t} x_s x_tᵀ/(n(n−1))
}

func view(b *stream.Dense, lo, hi int) blas64.General {
	d := b.Cols
	return blas64.General{Rows: hi - lo, Cols: d, Stride: d, Data: b.Data[lo*d : hi*d]}
}

// pairPiece is S1 = Σx and Q = Σxxᵀ (upper triangle) of a run of one set.
type pairPiece struct {
	s1 []float64
	q  *mat.SymDense
}

// pairPass streams the first pass: Σx and Σxxᵀ over all points, and
// C2 = avg over sets of (S1S1ᵀ − Q)/(n(n−1)), set by set.
func pairPass(ctx context.Context, src stream.DenseSource, d, workers int, check func(*stream.Dense, int) error) (*pairStats, error) {
	type acc struct {
		sum    []float64
		xx, c2 *mat.SymDense
	}
	accs := make([]acc, workers+1)
	for w := range accs {
		accs[w] = acc{sum: make([]float64, d), xx: mat.NewSymDense(d, nil), c2: mat.NewSymDense(d, nil)}
	}
	sp := &setPass[*pairPiece]{
		newPiece: func() *pairPiece { return &pairPiece{s1: make([]float64, d), q: mat.NewSymDense(d, nil)} },
		reset: func(p *pairPiece) {
			clear(p.s1)
			clear(p.q.RawSymmetric().Data)
		},
		batch: func(int, *stream.Dense) {},
		add: func(_ int, p *pairPiece, b *stream.Dense, lo, hi int) {
			for i := lo; i < hi; i++ {
				for j, v := range b.Row(i) {
					p.s1[j] += v
				}
			}
			blas64.Syrk(blas.Trans, 1, view(b, lo, hi), 1, p.q.RawSymmetric())
		},
		merge: func(dst, src *pairPiece) {
			for j, v := range src.s1 {
				dst.s1[j] += v
			}
			addUpper(dst.q, src.q, 1)
		},
		fold: func(w int, p *pairPiece, n int) {
			a := &accs[w]
			nf := float64(n)
			f := 1 / (nf * (nf - 1))
			blas64.Syr(f, blas64.Vector{N: d, Inc: 1, Data: p.s1}, a.c2.RawSymmetric())
			addUpper(a.c2, p.q, -f)
			addUpper(a.xx, p.q, 1)
			for j, v := range p.s1 {
				a.sum[j] += v
			}
		},
		check: check,
	}
	rows, sets, err := eachSetPass(ctx, src, d, workers, sp)
	if err != nil {
		return nil, err
	}
	if sets == 0 {
		return nil, fmt.Errorf("markov: the source has no rows")
	}
	for w := 1; w <= workers; w++ {
		addUpper(accs[0].xx, accs[w].xx, 1)
		addUpper(accs[0].c2, accs[w].c2, 1)
		for j, v := range accs[w].sum {
			accs[0].sum[j] += v
		}
	}
	a := accs[0]
	ps := &pairStats{rows: rows, sets: sets, v1: a.sum, v2: a.xx, c2: a.c2}
	nr := float64(rows)
	for j := range ps.v1 {
		ps.v1[j] /= nr
	}
	ps.v2.ScaleSym(1/nr, ps.v2)
	ps.c2.ScaleSym(1/float64(sets), ps.c2)
	return ps, nil
}

// addUpper adds s·src to dst on the upper triangle, the part BLAS writes.
func addUpper(dst, src *mat.SymDense, s float64) {
	a, b := dst.RawSymmetric(), src.RawSymmetric()
	for i := range a.N {
		ra, rb := a.Data[i*a.Stride:i*a.Stride+a.N], b.Data[i*b.Stride:i*b.Stride+b.N]
		for j := i; j < a.N; j++ {
			ra[j] += s * rb[j]
		}
	}
}

// tripleStats are the second pass's whitened third moments.
type tripleStats struct {
	rows, sets int64
	// c3 is the set average of Σ_distinct z_s⊗z_t⊗z_u/(n(n−1)(n−2)) with
	// z = W'ᵀx (MATH §3.2), whitened by wSet.
	c3 *solver.Sym3
	// v3 is the point average of (Wᵀx)^⊗3, whitened by wPoint (HMM only).
	v3 *solver.Sym3
}

// triplePiece holds Σz, Σzzᵀ (k×k, full) and Σz⊗3 of a run of one set.
type triplePiece struct {
	y, zz []float64
	cube  *solver.Sym3
}

// triplePass streams the second pass. wPoint may be nil (Markov chain).
func triplePass(ctx context.Context, src stream.DenseSource, d int, wSet, wPoint *mat.Dense, workers int) (*tripleStats, error) {
	_, k := wSet.Dims()
	type acc struct {
		c3, v3 *solver.Sym3
		z, zp  []float64
	}
	accs := make([]acc, workers+1)
	for w := range accs {
		accs[w] = acc{c3: solver.NewSym3(k)}
		if wPoint != nil {
			accs[w].v3 = solver.NewSym3(k)
		}
	}
	sp := &setPass[*triplePiece]{
		newPiece: func() *triplePiece {
			return &triplePiece{y: make([]float64, k), zz: make([]float64, k*k), cube: solver.NewSym3(k)}
		},
		reset: func(p *triplePiece) {
			clear(p.y)
			clear(p.zz)
			clear(p.cube.Data)
		},
		batch: func(w int, b *stream.Dense) {
			a := &accs[w]
			if cap(a.z) < b.Rows*k {
				a.z = make([]float64, b.Rows*k)
				a.zp = make([]float64, b.Rows*k)
			}
			x := view(b, 0, b.Rows)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, wSet.RawMatrix(), 0, blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: a.z[:b.Rows*k]})
			if wPoint != nil {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, wPoint.RawMatrix(), 0, blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: a.zp[:b.Rows*k]})
				addCubes(a.v3, a.zp, b.Rows, ones(b.Rows))
			}
		},
		add: func(w int, p *triplePiece, _ *stream.Dense, lo, hi int) {
			z := accs[w].z
			for i := lo; i < hi; i++ {
				zi := z[i*k : (i+1)*k]
				for a, v := range zi {
					p.y[a] += v
					row := p.zz[a*k : (a+1)*k]
					for c, u := range zi {
						row[c] += v * u
					}
				}
			}
			addCubes(p.cube, z[lo*k:], hi-lo, ones(hi-lo))
		},
		merge: func(dst, src *triplePiece) {
			for i, v := range src.y {
				dst.y[i] += v
			}
			for i, v := range src.zz {
				dst.zz[i] += v
			}
			for i, v := range src.cube.Data {
				dst.cube.Data[i] += v
			}
		},
		fold: func(w int, p *triplePiece, n int) {
			// S1^⊗3 − Σ_s Sym3(S1, z_s z_sᵀ) + 2Σ z_s^⊗3, over n(n−1)(n−2).
			nf := float64(n)
			f := 1 / (nf * (nf - 1) * (nf - 2))
			c3 := accs[w].c3
			addCubes(c3, p.y, 1, []float64{f})
			addSym(c3, p.y, p.zz, -f)
			for i, v := range p.cube.Data {
				c3.Data[i] += 2 * f * v
			}
		},
	}
	rows, sets, err := eachSetPass(ctx, src, d, workers, sp)
	if err != nil {
		return nil, err
	}
	for w := 1; w <= workers; w++ {
		accs[0].c3.AddTensor(accs[w].c3)
		if wPoint != nil {
			accs[0].v3.AddTensor(accs[w].v3)
		}
	}
	a := accs[0]
	a.c3.Invalidate()
	a.c3.Scale(1 / float64(sets))
	if a.v3 != nil {
		a.v3.Invalidate()
		a.v3.Scale(1 / float64(rows))
	}
	return &tripleStats{rows: rows, sets: sets, c3: a.c3, v3: a.v3}, nil
}

// ones returns n ones.
func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
