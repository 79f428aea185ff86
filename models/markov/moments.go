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

// pairPass streams the first pass.
func pairPass(ctx context.Context, src stream.DenseSource, d, workers int) (*pairStats, error) {
	type acc struct {
		rows, sets int64
		sum        []float64
		xx, c2     *mat.SymDense
		local      *mat.SymDense
		s1         []float64
	}
	accs := make([]acc, workers)
	for w := range accs {
		accs[w] = acc{sum: make([]float64, d), xx: mat.NewSymDense(d, nil), c2: mat.NewSymDense(d, nil), local: mat.NewSymDense(d, nil), s1: make([]float64, d)}
	}
	err := stream.Each(ctx, setBatches(src, d), workers, func(w int, b *stream.Dense) error {
		a := &accs[w]
		eachSet(b, func(lo, hi int) {
			n := float64(hi - lo)
			clear(a.s1)
			for i := lo; i < hi; i++ {
				for j, v := range b.Row(i) {
					a.s1[j] += v
				}
			}
			loc := a.local.RawSymmetric()
			clear(loc.Data)
			blas64.Syrk(blas.Trans, 1, view(b, lo, hi), 0, loc)
			// C2 += (S1S1ᵀ − Σxxᵀ)/(n(n−1)).
			f := 1 / (n * (n - 1))
			c2 := a.c2.RawSymmetric()
			blas64.Syr(f, blas64.Vector{N: d, Inc: 1, Data: a.s1}, c2)
			xx := a.xx.RawSymmetric()
			for i := range d {
				for j := i; j < d; j++ {
					v := loc.Data[i*loc.Stride+j]
					c2.Data[i*c2.Stride+j] -= f * v
					xx.Data[i*xx.Stride+j] += v
				}
			}
			for j, v := range a.s1 {
				a.sum[j] += v
			}
			a.rows += int64(hi - lo)
			a.sets++
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for w := 1; w < workers; w++ {
		accs[0].rows += accs[w].rows
		accs[0].sets += accs[w].sets
		accs[0].xx.AddSym(accs[0].xx, accs[w].xx)
		accs[0].c2.AddSym(accs[0].c2, accs[w].c2)
		for j, v := range accs[w].sum {
			accs[0].sum[j] += v
		}
	}
	a := accs[0]
	if a.sets == 0 {
		return nil, fmt.Errorf("markov: the source has no rows")
	}
	ps := &pairStats{rows: a.rows, sets: a.sets, v1: a.sum, v2: a.xx, c2: a.c2}
	nr := float64(a.rows)
	for j := range ps.v1 {
		ps.v1[j] /= nr
	}
	ps.v2.ScaleSym(1/nr, ps.v2)
	ps.c2.ScaleSym(1/float64(a.sets), ps.c2)
	return ps, nil
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

// triplePass streams the second pass. wPoint may be nil (Markov chain).
func triplePass(ctx context.Context, src stream.DenseSource, d int, wSet, wPoint *mat.Dense, workers int) (*tripleStats, error) {
	_, k := wSet.Dims()
	type acc struct {
		rows, sets int64
		c3, v3     *solver.Sym3
		z, zp      []float64
		y, zz      []float64
	}
	accs := make([]acc, workers)
	for w := range accs {
		accs[w] = acc{c3: solver.NewSym3(k), y: make([]float64, k), zz: make([]float64, k*k)}
		if wPoint != nil {
			accs[w].v3 = solver.NewSym3(k)
		}
	}
	err := stream.Each(ctx, setBatches(src, d), workers, func(w int, b *stream.Dense) error {
		a := &accs[w]
		if cap(a.z) < b.Rows*k {
			a.z = make([]float64, b.Rows*k)
			a.zp = make([]float64, b.Rows*k)
		}
		x := view(b, 0, b.Rows)
		z := blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: a.z[:b.Rows*k]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, wSet.RawMatrix(), 0, z)
		if wPoint != nil {
			zp := blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: a.zp[:b.Rows*k]}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, wPoint.RawMatrix(), 0, zp)
			for i := range b.Rows {
				addCube(a.v3, zp.Data[i*k:(i+1)*k], 1)
			}
		}
		eachSet(b, func(lo, hi int) {
			n := float64(hi - lo)
			f := 1 / (n * (n - 1) * (n - 2))
			clear(a.y)
			clear(a.zz)
			for i := lo; i < hi; i++ {
				zi := z.Data[i*k : (i+1)*k]
				for p, v := range zi {
					a.y[p] += v
					for q := range k {
						a.zz[p*k+q] += v * zi[q]
					}
				}
				addCube(a.c3, zi, 2*f)
			}
			// S1^⊗3 − Σ_s Sym3(S1, z_s z_sᵀ) + 2Σ z_s^⊗3, all over n(n−1)(n−2).
			addCube(a.c3, a.y, f)
			addSym(a.c3, a.y, a.zz, -f)
			a.rows += int64(hi - lo)
			a.sets++
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for w := 1; w < workers; w++ {
		accs[0].rows += accs[w].rows
		accs[0].sets += accs[w].sets
		accs[0].c3.AddTensor(accs[w].c3)
		if wPoint != nil {
			accs[0].v3.AddTensor(accs[w].v3)
		}
	}
	a := accs[0]
	a.c3.Invalidate()
	a.c3.Scale(1 / float64(a.sets))
	if a.v3 != nil {
		a.v3.Invalidate()
		a.v3.Scale(1 / float64(a.rows))
	}
	return &tripleStats{rows: a.rows, sets: a.sets, c3: a.c3, v3: a.v3}, nil
}
