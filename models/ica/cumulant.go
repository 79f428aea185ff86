package ica

import (
	"errors"
	"math"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The whitened rows z = Wᵀ(x − m) enter the contractions of the whitened
// fourth cumulant K = E[z^⊗4] − (the three pairings of S = E[zzᵀ]) =
// Σᵢ κᵢ bᵢ^⊗4 (docs/MATH.md §2.4, §3.8). Nothing k⁴ is formed: each pass contracts
// K with vectors fixed before it starts (Plan's passes 2, 3, ...).

// whitenBatch returns the whitened, centred rows z = Wᵀx − Wᵀm of the
// batch b (rows×k, row-major, in *scratch).
func whitenBatch(b *stream.Dense, w blas64.General, mw []float64, scratch *[]float64) blas64.General {
	r, k := b.Rows, w.Cols
	if cap(*scratch) < r*k {
		*scratch = make([]float64, r*k)
	}
	z := blas64.General{Rows: r, Cols: k, Stride: k, Data: (*scratch)[:r*k]}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, models.RowMatrix(b), w, 0, z)
	for i := range r {
		zi := z.Data[i*k : (i+1)*k]
		for j := range k {
			zi[j] -= mw[j]
		}
	}
	return z
}

// meanW returns Wᵀm.
func meanW(w *mat.Dense, mean []float64) []float64 {
	d, k := w.Dims()
	mw := make([]float64, k)
	for j := range k {
		for i := range d {
			mw[j] += mean[i] * w.At(i, j)
		}
	}
	return mw
}

// addThird adds a block of whitened rows z (rows×k) to the sums Σzzᵀ
// (upper triangle of s) and Σ (vᵀz) z⊗z⊗z (g); sc keeps the cubes'
// buffers between blocks.
func addThird(z blas64.General, v []float64, s blas64.Symmetric, g *solver.Sym3, sc *implicit.CubeScratch) {
	k := z.Cols
	blas64.Syrk(blas.Trans, 1, z, 1, s)
	vz := make([]float64, z.Rows)
	mat.NewVecDense(z.Rows, vz).MulVec(mat.NewDense(z.Rows, k, z.Data), mat.NewVecDense(k, v))
	// Σ (vᵀz) z⊗z⊗z through the Khatri–Rao GEMMs of the topic models'
	// cubes: a product per entry and row was a quarter of a k=63 fit.
	implicit.AddCubes(g, vz, z.Data[:z.Rows*k], z.Rows, sc)
}

// finishThird turns the sums of n rows into S = E[zzᵀ] and the tensor
// K(I,I,I,v) = E[(vᵀz) z^⊗3] − Sym3(Sv, S); it scales s and g in place.
func finishThird(s *mat.SymDense, g *solver.Sym3, n int64, v []float64) (*solver.Sym3, *mat.SymDense) {
	k := len(v)
	nf := float64(n)
	s.ScaleSym(1/nf, s)
	t := g
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
	return t, s
}

// addContract adds a block of whitened rows z to the sums of a polishing
// step for the columns θᵢ of th (k×c), with y = θᵢᵀz: Σ y⁴ (q, for the
// kurtoses) and, with p nil (the kurtosis contrast), Σ z y³ (columns of
// g); with p given (logcosh), Σ z tanh(y) into g and Σ (1 − tanh²(y))
// into p. *y is scratch.
func addContract(z, th blas64.General, y *[]float64, g blas64.General, q, p []float64) {
	r, c := z.Rows, th.Cols
	if cap(*y) < r*c {
		*y = make([]float64, r*c)
	}
	yb := blas64.General{Rows: r, Cols: c, Stride: c, Data: (*y)[:r*c]}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, z, th, 0, yb)
	for i, v := range yb.Data {
		v2 := v * v
		q[i%c] += v2 * v2
		if p == nil {
			yb.Data[i] = v2 * v
			continue
		}
		t := math.Tanh(v)
		p[i%c] += 1 - t*t
		yb.Data[i] = t
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, z, yb, 1, g)
}

// logcoshStep makes one fixed-point step of the logcosh contrast from the
// sums of n rows (g = Σ z tanh(θᵢᵀz), p = Σ (1 − tanh²)), for S = E[zzᵀ]:
// θᵢ ← E[z tanh(θᵢᵀz)] − E[1 − tanh²(θᵢᵀz)]·Sθᵢ, orthonormalised. S in
// place of the identity corrects for the noise the whitening leaves in z
// (S = I without noise). It returns the largest change of a column, 1 −
// |cos| with its sign free, and false when the step is not possible (theta
// is then unchanged).
func logcoshStep(theta, g *mat.Dense, p []float64, n int64, s mat.Symmetric) (float64, bool) {
	k, c := theta.Dims()
	nf := float64(n)
	var st mat.Dense
	st.Mul(s, theta)
	next := mat.NewDense(k, c, nil)
	for i := range c {
		for j := range k {
			next.Set(j, i, g.At(j, i)/nf-p[i]/nf*st.At(j, i))
		}
	}
	return moveTo(theta, next)
}

// finishContract turns the sums of n rows into g = K(I,θᵢ,θᵢ,θᵢ) (scaling
// g in place) and κᵢ = K(θᵢ,θᵢ,θᵢ,θᵢ), for S = E[zzᵀ].
func finishContract(g *mat.Dense, q []float64, n int64, s mat.Symmetric, theta *mat.Dense) (*mat.Dense, []float64) {
	k, c := theta.Dims()
	nf := float64(n)
	g.Scale(1/nf, g)
	kappa := make([]float64, c)
	var st mat.Dense
	st.Mul(s, theta) // Sθᵢ as columns
	for i := range c {
		var qq float64 // θᵢᵀSθᵢ
		for j := range k {
			qq += theta.At(j, i) * st.At(j, i)
		}
		for j := range k {
			g.Set(j, i, g.At(j, i)-3*qq*st.At(j, i))
		}
		kappa[i] = q[i]/nf - 3*qq*qq
	}
	return g, kappa
}

// refineStep makes one polishing step from g = K(I,θᵢ,θᵢ,θᵢ) and the
// kurtoses of the columns of theta: θᵢ ← sign(κᵢ)gᵢ, orthonormalised. It
// returns the largest change of a column and false when the step is not
// possible (theta is then unchanged).
func refineStep(theta, g *mat.Dense, kappa []float64) (float64, bool) {
	k, _ := theta.Dims()
	for i := range k {
		if kappa[i] < 0 {
			for j := range k {
				g.Set(j, i, -g.At(j, i))
			}
		}
	}
	return moveTo(theta, g)
}

// moveTo ends a polishing step: it orthonormalises the columns of next
// (symOrth) and makes them theta's, returning the largest change of a
// column, 1 − |cos| with its sign free; false when next's columns are
// dependent (theta is then unchanged).
func moveTo(theta, next *mat.Dense) (float64, bool) {
	if !symOrth(next) {
		return 0, false
	}
	_, c := theta.Dims()
	var change float64
	for i := range c {
		change = math.Max(change, 1-math.Abs(mat.Dot(next.ColView(i), theta.ColView(i))))
	}
	theta.Copy(next)
	return change, true
}

// refineTol is the change of the columns below which refining stops:
// 1 − |cos| of the largest move, about the square of its angle over two.
// The kurtosis steps converge cubically and reach it; the logcosh steps,
// linearly near the answer, stop at logcoshTol, a move of about 1.4e-5
// radians, far below the estimates' own sampling error.
const (
	refineTol  = 1e-12
	logcoshTol = 1e-8
)

var errNoRows = errors.New("ica: the source has no rows")
