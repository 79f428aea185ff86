package markov

import "github.com/streamfit/streamfit/solver"

// The helpers below walk the packed entries i ≤ j ≤ l of a solver.Sym3 in
// its storage order; callers invalidate the tensor's cache when done.

// addCube adds s·z⊗z⊗z to t.
func addCube(t *solver.Sym3, z []float64, s float64) {
	k, p := t.K, 0
	for i := range k {
		zi := s * z[i]
		for j := i; j < k; j++ {
			zij := zi * z[j]
			for l := j; l < k; l++ {
				t.Data[p] += zij * z[l]
				p++
			}
		}
	}
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
