package markov

import (
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// addSym walks the packed entries i ≤ j ≤ l of a solver.Sym3 in its storage
// order; callers invalidate the tensor's cache when done.

// addCubes adds Σᵢ wᵢ zᵢ⊗zᵢ⊗zᵢ over the n rows zᵢ of z (row-major n×k) to t.
func addCubes(t *solver.Sym3, z []float64, n int, w []float64) {
	t.AddTensor(solver.FromFactors(w, mat.DenseCopyOf(mat.NewDense(n, t.K, z[:n*t.K]).T())))
}

// addSym adds s·Sym3(y, A) = s·Σ_d y ⊗_d A to t, for a symmetric k×k A
// given row-major.
func addSym(t *solver.Sym3, y, a []float64, s float64) {
	k, p := t.K, 0
	for i := range k {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				t.Data[p] += s * (y[i]*a[j*k+l] + y[j]*a[i*k+l] + y[l]*a[i*k+j])
				p++
			}
		}
	}
}
