package gmm

import (
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// addCubes adds the sum of zᵢ⊗zᵢ⊗zᵢ over the n rows zᵢ of z (row-major
// n×k) to t.
func addCubes(t *solver.Sym3, z []float64, n int) {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	t.AddTensor(solver.FromFactors(w, mat.DenseCopyOf(mat.NewDense(n, t.K, z[:n*t.K]).T())))
}
