package solverbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/streamfit/streamfit/solver"
)

// TestNOJDConditioning: NOJD accuracy on full-rank non-orthogonal tensors
// against the condition number of the factor matrix: the two plug-in
// choices, NOJD + 50 CP-ALS sweeps (Options.Refine), ALS from a slice and
// from random factors. d = k = 25, unit Gaussian factors, π_i = 1 + U(0,1),
// ‖E‖_F = 0.01.
func TestNOJDConditioning(t *testing.T) {
	gate(t)
	ctx := context.Background()
	d := 25
	inv := func(ctx context.Context, T solver.Tensor, r int, o solver.Options) (*solver.Result, error) {
		return solver.JointDiagWith(ctx, T, r, o, solver.JDOptions{Method: solver.NonOrthogonal, TwoStage: true, PlugIn: solver.PlugInInverse})
	}
	ms := []method{named(t, "nojd0"), named(t, "nojd"), {name: "nojd-inv", fn: inv},
		{name: "nojd + 50 ALS", fn: named(t, "nojd").fn, opt: func(o solver.Options) solver.Options { o.Refine = 50; return o }},
		named(t, "als"), named(t, "als-random")}
	names := methodNames(ms)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| trial | κ(U) | %s |\n|---|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(ms)))
	for tr := 0; tr < 8; tr++ {
		rng := rand.New(rand.NewPCG(uint64(d*1000+d), uint64(tr)))
		u := unitGauss(d, d, rng)
		var svd mat.SVD
		svd.Factorize(u, mat.SVDNone)
		sv := svd.Values(nil)
		T := solver.FromFactors(weights(d, frob, rng), u)
		T.AddTensor(noise(d, 0.01, frob, false, rng))
		ts := newTallies(len(ms))
		for i, m := range ms {
			res, err, sec := m.run(ctx, T, d, uint64(tr))
			ts[i].add(u, res, err, sec)
		}
		logReasons(t, names, ts)
		b.WriteString(tableRow(fmt.Sprintf("%d | %.0f", tr, sv[0]/sv[len(sv)-1]), ts) + "\n")
	}
	t.Log(b.String())
}
