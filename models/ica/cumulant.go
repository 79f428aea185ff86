package ica

import (
	"context"
	"errors"
	"math"

	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// whitened streams the whitened rows z = Wᵀ(x − m) for the contractions of
// the whitened fourth cumulant K = E[z^⊗4] − (the three pairings of
// S = E[zzᵀ]) = Σᵢ κᵢ bᵢ^⊗4 (MATH §2.4, §3.8). Nothing k⁴ is formed: each
// pass contracts K with vectors fixed before it starts.
type whitened struct {
	src     stream.DenseSource
	w       *mat.Dense // d×k
	mean    []float64
	workers int
	n       int64         // rows of the last pass
	s       *mat.SymDense // S = E[zzᵀ], from the third-order pass
	passes  int           // passes made
}

// each streams one pass, handing fn the k×rows block of whitened, centred
// rows of every batch (row-major: rows×k).
func (wh *whitened) each(ctx context.Context, fn func(w int, z blas64.General) error) error {
	path := wh.src.Info().Path
	d, k := wh.w.Dims()
	mw := make([]float64, k) // Wᵀm
	for j := range k {
		for i := range d {
			mw[j] += wh.mean[i] * wh.w.At(i, j)
		}
	}
	scratch := make([][]float64, wh.workers)
	ns := make([]int64, wh.workers)
	wr := wh.w.RawMatrix()
	err := stream.Each(ctx, wh.src.Rows, wh.workers, func(w int, b *stream.Dense) error {
		if err := checkBatch(path, b, d); err != nil {
			return err
		}
		if b.Rows == 0 {
			return nil
		}
		r := b.Rows
		ns[w] += int64(r)
		if cap(scratch[w]) < r*k {
			scratch[w] = make([]float64, r*k)
		}
		z := blas64.General{Rows: r, Cols: k, Stride: k, Data: scratch[w][:r*k]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, batchMatrix(b), wr, 0, z)
		for i := range r {
			zi := z.Data[i*k : (i+1)*k]
			for j := range k {
				zi[j] -= mw[j]
			}
		}
		return fn(w, z)
	})
	wh.passes++
	wh.n = 0
	for _, n := range ns {
		wh.n += n
	}
	return err
}

// third streams S and K(I,I,I,v) = E[(vᵀz) z^⊗3] − Sym3(Sv, S), the
// symmetric third-order tensor the solver decomposes: O(k³) per row (the
// packed k(k+1)(k+2)/6 entries of (vᵀz) z^⊗3).
func (wh *whitened) third(ctx context.Context, v []float64) (*solver.Sym3, error) {
	_, k := wh.w.Dims()
	type acc struct {
		s *mat.SymDense
		g *solver.Sym3
	}
	accs := make([]acc, wh.workers)
	for i := range accs {
		accs[i] = acc{mat.NewSymDense(k, nil), solver.NewSym3(k)}
	}
	err := wh.each(ctx, func(w int, z blas64.General) error {
		a := &accs[w]
		blas64.Syrk(blas.Trans, 1, z, 1, a.s.RawSymmetric())
		vz := make([]float64, z.Rows)
		mat.NewVecDense(z.Rows, vz).MulVec(mat.NewDense(z.Rows, k, z.Data), mat.NewVecDense(k, v))
		// Σ (vᵀz) z⊗z⊗z, one Sym3 per batch.
		a.g.AddTensor(solver.FromFactors(vz, mat.DenseCopyOf(mat.NewDense(z.Rows, k, z.Data).T())))
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := 1; i < wh.workers; i++ {
		accs[0].s.AddSym(accs[0].s, accs[i].s)
		accs[0].g.AddTensor(accs[i].g)
	}
	if wh.n == 0 {
		return nil, errNoRows
	}
	nf := float64(wh.n)
	s := accs[0].s
	s.ScaleSym(1/nf, s)
	wh.s = s
	t := accs[0].g
	t.Invalidate()
	t.Scale(1 / nf)
	sv := make([]float64, k)
	mat.NewVecDense(k, sv).MulVec(s, mat.NewVecDense(k, v))
	p := 0
	for i := range k {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				t.Data[p] -= s.At(i, j)*sv[l] + s.At(i, l)*sv[j] + s.At(j, l)*sv[i]
				p++
			}
		}
	}
	t.Invalidate()
	return t, nil
}

// contract streams, for the columns θᵢ of theta (k×c), one pass of
// g = K(I,θᵢ,θᵢ,θᵢ) = E[(θᵢᵀz)³z] − 3(θᵢᵀSθᵢ)Sθᵢ (columns of g) and
// κᵢ = K(θᵢ,θᵢ,θᵢ,θᵢ) = E[(θᵢᵀz)⁴] − 3(θᵢᵀSθᵢ)²: O(k·c) per row.
func (wh *whitened) contract(ctx context.Context, theta *mat.Dense) (g *mat.Dense, kappa []float64, err error) {
	k, c := theta.Dims()
	type acc struct {
		g *mat.Dense // k×c: Σ z (θᵢᵀz)³
		q []float64  // Σ (θᵢᵀz)⁴
		y []float64  // rows×c scratch
	}
	accs := make([]acc, wh.workers)
	for i := range accs {
		accs[i] = acc{g: mat.NewDense(k, c, nil), q: make([]float64, c)}
	}
	th := theta.RawMatrix()
	err = wh.each(ctx, func(w int, z blas64.General) error {
		a := &accs[w]
		r := z.Rows
		if cap(a.y) < r*c {
			a.y = make([]float64, r*c)
		}
		y := blas64.General{Rows: r, Cols: c, Stride: c, Data: a.y[:r*c]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, z, th, 0, y)
		for i, v := range y.Data {
			v2 := v * v
			a.q[i%c] += v2 * v2
			y.Data[i] = v2 * v
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, z, y, 1, a.g.RawMatrix())
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i := 1; i < wh.workers; i++ {
		accs[0].g.Add(accs[0].g, accs[i].g)
		for j, v := range accs[i].q {
			accs[0].q[j] += v
		}
	}
	if wh.n == 0 {
		return nil, nil, errNoRows
	}
	nf := float64(wh.n)
	g = accs[0].g
	g.Scale(1/nf, g)
	kappa = make([]float64, c)
	var st mat.Dense
	st.Mul(wh.s, theta) // Sθᵢ as columns
	for i := range c {
		var q float64 // θᵢᵀSθᵢ
		for j := range k {
			q += theta.At(j, i) * st.At(j, i)
		}
		for j := range k {
			g.Set(j, i, g.At(j, i)-3*q*st.At(j, i))
		}
		kappa[i] = accs[0].q[i]/nf - 3*q*q
	}
	return g, kappa, nil
}

// refine polishes the columns of theta (orthonormal, k×k) by symmetric
// fourth-order power steps θᵢ ← sign(κᵢ)K(I,θᵢ,θᵢ,θᵢ), Θ ← Θ(ΘᵀΘ)^{-1/2},
// one pass over the rows each, until the columns stop moving or maxIter
// steps (the fixed point converges cubically: the first step does most of
// the work). It returns the kurtoses κᵢ = K(θᵢ,θᵢ,θᵢ,θᵢ) from the last pass,
// which saw the columns before the last step (they differ from the final
// ones by O(change)), or from one pass on the given columns when maxIter is
// 0, and the number of steps taken.
func (wh *whitened) refine(ctx context.Context, theta *mat.Dense, maxIter int) ([]float64, int, error) {
	const tol = 1e-12
	k, _ := theta.Dims()
	for it := 1; ; it++ {
		g, kappa, err := wh.contract(ctx, theta)
		if err != nil || it > maxIter {
			return kappa, it - 1, err
		}
		for i := range k {
			if kappa[i] < 0 {
				for j := range k {
					g.Set(j, i, -g.At(j, i))
				}
			}
		}
		if !symOrth(g) {
			return kappa, it - 1, nil
		}
		var change float64
		for i := range k {
			change = math.Max(change, 1-math.Abs(mat.Dot(g.ColView(i), theta.ColView(i))))
		}
		theta.Copy(g)
		if change < tol || it == maxIter {
			return kappa, it, nil
		}
	}
}

var errNoRows = errors.New("ica: the source has no rows")
