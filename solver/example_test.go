package solver_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/streamfit/streamfit/solver"
)

// Decompose an explicit orthogonal tensor 3·e₀⊗3 + 2·e₁⊗3 with the robust
// tensor power method picked from the registry.
func Example() {
	v := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 0, 0})
	t := solver.FromFactors([]float64{3, 2}, v)
	rtpm, _ := solver.ByName("rtpm")
	res, err := rtpm(context.Background(), t, 2, solver.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("weights %.3f %.3f\n", res.Weights[0], res.Weights[1])
	// Output: weights 3.000 2.000
}
