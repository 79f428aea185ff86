package implicit

import (
	"fmt"
	"sync"

	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Whitened holds the raw whitened moments of a pass, averaged over the used
// documents: E3 = Ê3(W,W,W), E2 = WᵀÊ2W and M1 = WᵀM̂1 (MATH §3.4–3.5).
// Models combine them with their own coefficients.
type Whitened struct {
	Counts
	M1 []float64
	E2 *mat.SymDense
	E3 *solver.Sym3
}

// wTerms returns, for vocabulary rows lo..hi−1, acc = 2 Σᵢ G3ᵢ ωᵢ⊗3 (valid
// entries as in Y3) and zw[a, (b,c)] = Σᵢ Zᵢₐ ωᵢ_b ωᵢ_c (all rows a), the
// pieces of the Σᵢ Sym₃(Zᵢ, ωᵢωᵢᵀ) terms.
func (a *TripleAcc) wTerms(wd []float64, lo, hi int) (acc, zw []float64) {
	k, p := a.K, pairs(a.K)
	acc = make([]float64, k*p)
	zw = make([]float64, k*p)
	gw := make([]float64, min(hi-lo, wChunk)*k)
	var kr []float64
	for r0 := lo; r0 < hi; r0 += wChunk {
		m := min(wChunk, hi-r0)
		for r := range m {
			floats.ScaleTo(gw[r*k:(r+1)*k], 2*a.G3[r0+r], wd[(r0+r)*k:(r0+r+1)*k])
		}
		kr = addCubes(acc, gw, wd[r0*k:], m, k, kr)
		// Rebuild the Khatri–Rao rows chunk by chunk for the Z product.
		for s0 := 0; s0 < m; s0 += chunkRows {
			n := min(chunkRows, m-s0)
			for r := range n {
				row := wd[(r0+s0+r)*k : (r0+s0+r+1)*k]
				out := kr[r*p : (r+1)*p]
				q := 0
				for b := range k {
					floats.ScaleTo(out[q:q+k-b], row[b], row[b:])
					q += k - b
				}
			}
			z := blas64.General{Rows: n, Cols: k, Stride: k, Data: a.Z[(r0+s0)*k:]}
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, z, general(kr, n, p), 1, general(zw, k, p))
		}
	}
	return acc, zw
}

// wChunk bounds the vocabulary rows whose Khatri–Rao products are held at once
// when the W-terms of the third moment are formed.
const wChunk = 512

// Moments averages the statistics and forms the terms that depend only on W
// (the whitening matrix the pass used), at O(d·K³·2/3) once per fit. The
// vocabulary is split into workers contiguous parts computed concurrently and
// summed in order, so the result is identical for the same workers.
func (a *TripleAcc) Moments(w *mat.Dense, workers int) (*Whitened, error) {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: Moments(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	k, d, p := a.K, a.D, pairs(a.K)
	wr := w.RawMatrix()
	wd := wr.Data
	if wr.Stride != k {
		wd = make([]float64, d*k)
		for i := range d {
			copy(wd[i*k:(i+1)*k], wr.Data[i*wr.Stride:i*wr.Stride+k])
		}
	}
	workers = max(1, min(workers, d))
	accs := make([][]float64, workers)
	zws := make([][]float64, workers)
	var wg sync.WaitGroup
	for part := range workers {
		lo, hi := d*part/workers, d*(part+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			accs[part], zws[part] = a.wTerms(wd, lo, hi)
		}()
	}
	wg.Wait()
	acc := append([]float64(nil), a.Y3...)
	zw := zws[0]
	for part := range workers {
		floats.Add(acc, accs[part])
		if part > 0 {
			floats.Add(zw, zws[part])
		}
	}
	inv := 1 / float64(a.Docs)
	e3 := solver.NewSym3(k)
	q := 0
	for i := range k {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				v := acc[i*p+pairOffset(j, k)+l-j] -
					zw[i*p+pairOffset(j, k)+l-j] - zw[j*p+pairOffset(i, k)+l-i] - zw[l*p+pairOffset(i, k)+j-i]
				e3.Data[q] = v * inv
				q++
			}
		}
	}
	e3.Invalidate()

	// E2 = (YY − Wᵀ diag(G2) W) / N, with Wᵀ diag(G2) W formed in row chunks
	// so no second d×k matrix is needed.
	s := make([]float64, k*k)
	gw := make([]float64, min(d, wChunk)*k)
	for r0 := 0; r0 < d; r0 += wChunk {
		m := min(wChunk, d-r0)
		for r := range m {
			floats.ScaleTo(gw[r*k:(r+1)*k], a.G2[r0+r], wd[(r0+r)*k:(r0+r+1)*k])
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(wd[r0*k:], m, k), general(gw, m, k), 1, general(s, k, k))
	}
	e2 := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			v := (a.YY[i*k+j]+a.YY[j*k+i])/2 - (s[i*k+j]+s[j*k+i])/2
			e2.SetSym(i, j, v*inv)
		}
	}
	m1 := make([]float64, k)
	floats.ScaleTo(m1, inv, a.M1)
	return &Whitened{Counts: a.Counts, M1: m1, E2: e2, E3: e3}, nil
}
