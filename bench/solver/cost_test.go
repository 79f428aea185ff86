package solverbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/solver"
)

// TestCost: seconds per solve as k grows (d = k), explicit Sym3, orthogonal
// factors, π_i = 1 + U(0,1), noisy (‖E‖_F = 0.01). Best of 3 runs for
// k ≤ 40 (one at k = 80); mean factor error and failures in brackets, and
// each time as a ratio to ojd's in the same run.
func TestCost(t *testing.T) {
	gate(t)
	ctx := context.Background()
	names := []string{"rtpm", "rtpm-stop", "ojd", "nojd", "als", "alt"}
	var b strings.Builder
	fmt.Fprintf(&b, "\nseconds per solve (× ojd), explicit Sym3, d = k, orthogonal factors, ‖E‖_F = 0.01\n\n| k | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, k := range envInts(t, "STREAMFIT_COST_K", []int{10, 20, 40, 80}) {
		rng := rand.New(rand.NewPCG(5, uint64(k)))
		u := ortho(k, k, rng)
		T := solver.FromFactors(weights(k, frob, rng), u)
		T.AddTensor(noise(k, 0.01, frob, true, rng))
		reps := 3
		if k > 40 {
			reps = 1
		}
		secs := make([]float64, len(names))
		cells := make([]string, len(names))
		for i, name := range names {
			m := named(t, name)
			best := math.Inf(1)
			var tl tally
			for rep := 0; rep < reps; rep++ {
				res, err, sec := m.run(ctx, T, k, 1)
				best = math.Min(best, sec)
				if rep == 0 {
					tl.add(u, res, err, sec)
				}
			}
			secs[i] = best
			cells[i] = fmt.Sprintf("%.3f (err %.4f, %d fail)", best, tl.mean(), tl.fails)
		}
		ojd := secs[2]
		fmt.Fprintf(&b, "| %d |", k)
		for i := range names {
			fmt.Fprintf(&b, " %s ×%.1f |", cells[i], secs[i]/ojd)
		}
		b.WriteString("\n")
		t.Logf("k=%d done", k)
	}
	t.Log(b.String())
}
