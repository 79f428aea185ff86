package markov

import (
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// pairStats are the first pass's sums: point moments V1, V2 and the within-set
// pair moment C2 (docs/MATH.md §3.2), as averages.
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

// tripleStats are the second pass's whitened third moments.
type tripleStats struct {
	rows, sets int64
	// c3 is the set average of Σ_distinct z_s⊗z_t⊗z_u/(n(n−1)(n−2)) with
	// z = W'ᵀx (docs/MATH.md §3.2), whitened by wSet.
	c3 *solver.Sym3
	// v3 is the point average of (Wᵀx)^⊗3, whitened by wPoint (HMM only).
	v3 *solver.Sym3
}

// ones returns n ones.
func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
