package implicit

import "github.com/streamfit/streamfit/tensor"

// CubeScratch holds the buffers of AddCubes between calls.
type CubeScratch struct {
	acc, s, kr []float64
}

// AddCubes adds Σ_r w_r z_r⊗z_r⊗z_r to t for the n rows z_r of z (n×k
// row-major, k = t.K), through the Khatri–Rao chunks and GEMMs of the
// passes' cubes (addCubes) rather than a product per entry and row: the
// dense models' per-batch third moments. sc keeps the buffers between
// calls (nil: fresh ones).
func AddCubes(t *tensor.Sym3, w, z []float64, n int, sc *CubeScratch) {
	k := t.K
	if n == 0 || k == 0 {
		return
	}
	if sc == nil {
		sc = &CubeScratch{}
	}
	p := pairs(k)
	sc.acc = grow(sc.acc, k*p)
	clear(sc.acc)
	sc.s = grow(sc.s, n*k)
	for r := range n {
		zr, sr := z[r*k:(r+1)*k], sc.s[r*k:(r+1)*k]
		for j, v := range zr {
			sr[j] = w[r] * v
		}
	}
	sc.kr = addCubes(sc.acc, sc.s, k, z, nil, n, k, sc.kr)
	packCubes(t.Data, sc.acc, k, 1)
	t.Invalidate()
}

// packCubes adds scale × the entries (i, j, l), i ≤ j ≤ l, of acc (k ×
// k(k+1)/2 as addCubes leaves it: row i, the pairs (j, l) from i's block
// start on) to dst, a packed symmetric tensor's data.
func packCubes(dst, acc []float64, k int, scale float64) {
	p, q := pairs(k), 0
	for i := range k {
		for j := i; j < k; j++ {
			row := acc[i*p+pairOffset(j, k):]
			for l := j; l < k; l++ {
				dst[q] += scale * row[l-j]
				q++
			}
		}
	}
}
