package implicit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// TestAddCubes: the GEMM route of AddCubes gives the brute-force sum
// Σ_r w_r z_r⊗3 (tensor.FromFactors), to rounding, for sizes across the
// chunk and block boundaries, added onto what t held.
func TestAddCubes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sc CubeScratch
	for _, c := range []struct{ n, k int }{{1, 1}, {5, 3}, {70, 9}, {130, 17}} {
		z := make([]float64, c.n*c.k)
		w := make([]float64, c.n)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		got := tensor.NewSym3(c.k)
		for i := range got.Data {
			got.Data[i] = float64(i)
		}
		AddCubes(got, w, z, c.n, &sc)
		want := tensor.FromFactors(w, mat.DenseCopyOf(mat.NewDense(c.n, c.k, z).T()))
		for i, v := range want.Data {
			if d := math.Abs(got.Data[i] - float64(i) - v); d > 1e-10*(1+math.Abs(v)) {
				t.Fatalf("n=%d k=%d: entry %d is %v, want %v", c.n, c.k, i, got.Data[i]-float64(i), v)
			}
		}
	}
}
