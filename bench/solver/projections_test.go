package solverbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/solver"
)

// TestProjections: [003] Fig. 1, d = k = 10: error against the number of
// random projections L0 for the one-stage method (OJD0 / NOJD0) and the
// two-stage method (random + d plug-in projections). Orthogonal ε = 0.05,
// non-orthogonal ε = 0.01, frob convention (‖E‖_F = ε, π_i = 1 + U(0,1)).
// 200 trials (1000 with STREAMFIT_BENCH=full, the paper's count).
func TestProjections(t *testing.T) {
	gate(t)
	ctx := context.Background()
	d, trials := 10, 200
	if full() {
		trials = 1000
	}
	for _, orthoCase := range []bool{true, false} {
		eps, method := 0.05, solver.Orthogonal
		if !orthoCase {
			eps, method = 0.01, solver.NonOrthogonal
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s, d=k=10, ε=%g (‖E‖_F), %d trials\n\n| L0 | one stage (random) | two stages (random + plug-in) | failures |\n|---|---|---|---|\n",
			map[bool]string{true: "orthogonal (OJD)", false: "non-orthogonal (NOJD)"}[orthoCase], eps, trials)
		for _, l0 := range []int{2, 5, 10, 20, 40, 80} {
			var one, two tally
			for tr := 0; tr < trials; tr++ {
				rng := rand.New(rand.NewPCG(77, uint64(tr)))
				u := ortho(d, d, rng)
				if !orthoCase {
					u = unitGauss(d, d, rng)
				}
				T := solver.FromFactors(weights(d, frob, rng), u)
				T.AddTensor(noise(d, eps, frob, orthoCase, rng))
				o := solver.Options{Seed: uint64(tr), Projections: l0}
				r0, err0 := solver.JointDiag(ctx, T, d, o, method, false)
				one.add(u, r0, err0, 0)
				r1, err1 := solver.JointDiag(ctx, T, d, o, method, true)
				two.add(u, r1, err1, 0)
			}
			fmt.Fprintf(&b, "| %d | %.4f | %.4f | %d, %d |\n", l0, one.mean(), two.mean(), one.fails, two.fails)
		}
		t.Log(b.String())
	}
}
