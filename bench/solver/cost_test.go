package solverbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/solver"
)

// costNames is every registered symmetric solver, in table order; TestCost
// fails when the registry gains a solver this list lacks.
var costNames = []string{"rtpm", "rtpm-stop", "simultaneous", "ojd0", "ojd", "nojd0", "nojd", "als", "als-random", "alt"}

// cpuSeconds is the process's user + system CPU time. The solvers run on one
// goroutine, so its difference over a solve is that solve's CPU time (plus
// the garbage collector's), which the other jobs on the machine do not
// inflate the way they inflate wall time.
func cpuSeconds(t *testing.T) float64 { return sysinfo.CPUTime().Seconds() }

// TestCost: CPU seconds per solve as k grows (d = k) for every registered
// solver, explicit Sym3, orthogonal factors, π_i = 1 + U(0,1), noisy
// (‖E‖_F = 0.01). Best of 3 runs for k ≤ 40 (one at k = 80). The first
// table gives CPU seconds and the ratio to ojd's in the same run, the
// second the mean factor error and failures (errors returned) of the first
// run, so a cheap solver that fails is visible.
func TestCost(t *testing.T) {
	gate(t)
	if reg := solver.Names(); !slices.Equal(slices.Sorted(slices.Values(costNames)), reg) {
		t.Fatalf("cost table covers %v, registry has %v", costNames, reg)
	}
	ctx := context.Background()
	names := costNames
	ojdAt := slices.Index(names, "ojd")
	head := fmt.Sprintf("| k | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	var cost, acc strings.Builder
	for _, k := range envInts(t, "STREAMFIT_COST_K", []int{10, 20, 40, 80}) {
		rng := rand.New(rand.NewPCG(5, uint64(k)))
		u := ortho(k, k, rng)
		T := solver.FromFactors(weights(k, frob, rng), u)
		T.AddTensor(noise(k, 0.01, frob, true, rng))
		reps := 3
		if k > 40 {
			reps = 1
		}
		cpu := make([]float64, len(names))
		tallies := newTallies(len(names))
		for i, name := range names {
			m := named(t, name)
			cpu[i] = math.Inf(1)
			for rep := 0; rep < reps; rep++ {
				c0 := cpuSeconds(t)
				res, err, sec := m.run(ctx, T, k, 1)
				cpu[i] = math.Min(cpu[i], cpuSeconds(t)-c0)
				if rep == 0 {
					tallies[i].add(u, res, err, sec)
				}
			}
		}
		fmt.Fprintf(&cost, "| %d |", k)
		for i := range names {
			fmt.Fprintf(&cost, " %.3g ×%.1f |", cpu[i], cpu[i]/cpu[ojdAt])
		}
		cost.WriteString("\n")
		acc.WriteString(tableRow(fmt.Sprint(k), tallies) + "\n")
		logReasons(t, names, tallies)
		t.Logf("k=%d done", k)
	}
	t.Logf("\nCPU seconds per solve (× ojd in the same run), explicit Sym3, d = k, orthogonal factors, ‖E‖_F = 0.01\n\n%s%s\nmean factor error of the same solves (failures: errors returned)\n\n%s%s",
		head, cost.String(), head, acc.String())
}
