package gmm

import "github.com/streamfit/streamfit/solver"

// addCube adds z⊗z⊗z to the packed tensor t (entries i ≤ j ≤ l, in the
// lexicographic order solver.Sym3 stores them). The caller invalidates t's
// cache once the pass is over.
func addCube(t *solver.Sym3, z []float64) {
	k, p := t.K, 0
	d := t.Data
	for i := range k {
		zi := z[i]
		for j := i; j < k; j++ {
			zij := zi * z[j]
			for l := j; l < k; l++ {
				d[p] += zij * z[l]
				p++
			}
		}
	}
}
