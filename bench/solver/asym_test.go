package solverbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/streamfit/streamfit/solver"
)

// cpErr is the [003] error on an asymmetric CP: components matched on the
// first mode, then (1/3)(‖a−â‖+‖b−b̂‖+‖c−ĉ‖) per mode with signs fixed per
// mode, averaged over the true components; a missing one counts √2.
func cpErr(truth [3]*mat.Dense, cp *solver.CP) float64 {
	if cp == nil {
		return math.Sqrt2
	}
	match, _ := solver.MatchColumns(truth[0], cp.A)
	est := [3]*mat.Dense{cp.A, cp.B, cp.C}
	_, k := truth[0].Dims()
	s := 0.0
	for i, j := range match {
		if j < 0 {
			s += math.Sqrt2
			continue
		}
		for m := 0; m < 3; m++ {
			u, v := truth[m].ColView(i), est[m].ColView(j)
			sign := math.Copysign(1, mat.Dot(u, v))
			var diff mat.VecDense
			diff.AddScaledVec(u, -sign, v)
			s += mat.Norm(&diff, 2) / 3
		}
	}
	return s / float64(k)
}

// TestAsymmetric: [003] App. A Fig. 6 — 50×50×50 tensors Σ π_i a_i⊗b_i⊗c_i
// + E with three different factor sets (one per mode), orthogonal (A, B, C
// orthonormal) and non-orthogonal (unit Gaussian columns), k ∈ {10, 50},
// π_i = 1 + U(0,1), E i.i.d. Gaussian (not symmetric) with ‖E‖_F = ε.
// Methods: asymmetric JD ([003] §6: OJD0/OJD1 in the orthogonal case,
// NOJD0/NOJD1 in both), CP-ALS from random factors (the baseline), CP-ALS
// from random factors with 5 restarts keeping the best residual, and Alt
// (registry defaults). 3 trials per row (6 with STREAMFIT_BENCH=full);
// STREAMFIT_ASYM_K=10 picks k, STREAMFIT_ASYM_CASE=ortho|nonortho the case,
// STREAMFIT_ASYM_TRIALS the trials, STREAMFIT_ASYM_NOJD=L0,sweeps caps NOJD.
func TestAsymmetric(t *testing.T) {
	gate(t)
	ctx := context.Background()
	d := 50
	trials := envInts(t, "STREAMFIT_ASYM_TRIALS", []int{3})[0]
	if nojdCaps = envInts(t, "STREAMFIT_ASYM_NOJD", nil); nojdCaps != nil && len(nojdCaps) != 2 {
		t.Fatalf("STREAMFIT_ASYM_NOJD=%v: want L0,sweeps", nojdCaps)
	}
	if full() {
		trials = 6
	}
	for _, orthoCase := range []bool{true, false} {
		if c := os.Getenv("STREAMFIT_ASYM_CASE"); c != "" && (c == "ortho") != orthoCase {
			continue
		}
		names := []string{"ojd0", "ojd", "nojd0", "nojd", "als", "als best of 5", "alt"}
		if !orthoCase {
			names = []string{"nojd0", "nojd", "als", "als best of 5", "alt"}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s factors, 50×50×50; mean factor error (seconds per solve)\n\n| k | ε | %s |\n|---|---|%s\n",
			map[bool]string{true: "orthogonal", false: "non-orthogonal"}[orthoCase], strings.Join(names, " | "), strings.Repeat("---|", len(names)))
		for _, k := range envInts(t, "STREAMFIT_ASYM_K", []int{10, 50}) {
			for _, eps := range []float64{0.01, 0.1, 0.3} {
				errs := make([]float64, len(names))
				secs := make([]float64, len(names))
				fails := make([]int, len(names))
				for tr := 0; tr < trials; tr++ {
					rng := rand.New(rand.NewPCG(uint64(6000+k), uint64(tr)))
					var f [3]*mat.Dense
					for m := range f {
						if orthoCase {
							f[m] = ortho(d, k, rng)
						} else {
							f[m] = unitGauss(d, k, rng)
						}
					}
					T := solver.Dense3FromCP(weights(k, frob, rng), f[0], f[1], f[2])
					e := make([]float64, len(T.Data))
					s := 0.0
					for i := range e {
						e[i] = rng.NormFloat64()
						s += e[i] * e[i]
					}
					for i := range e {
						T.Data[i] += eps / math.Sqrt(s) * e[i]
					}
					for i, name := range names {
						t0 := time.Now()
						cp, err := solveAsym(ctx, name, T, k, uint64(tr))
						secs[i] += time.Since(t0).Seconds()
						if err != nil {
							fails[i]++
							t.Logf("%s k=%d ε=%g trial %d: %v", name, k, eps, tr, err)
						}
						errs[i] += cpErr(f, cp)
					}
				}
				row := fmt.Sprintf("| %d | %g |", k, eps)
				for i := range names {
					row += fmt.Sprintf(" %.4f (%.1f s)", errs[i]/float64(trials), secs[i]/float64(trials))
					if fails[i] > 0 {
						row += fmt.Sprintf(" %d fail", fails[i])
					}
					row += " |"
				}
				t.Log(row)
				b.WriteString(row + "\n")
			}
		}
		t.Log(b.String())
	}
}

// solveAsym runs a registered asymmetric solver, or ALS with restarts.
func solveAsym(ctx context.Context, name string, T solver.Asym, k int, seed uint64) (*solver.CP, error) {
	if name == "als best of 5" {
		var best *solver.CP
		var firstErr error
		for s := uint64(0); s < 5; s++ {
			cp, err := solver.CPALS(ctx, T, k, nil, solver.Options{Seed: seed*5 + s})
			if err != nil {
				firstErr = err
				continue
			}
			if best == nil || cp.Residual < best.Residual {
				best = cp
			}
		}
		if best == nil {
			return nil, firstErr
		}
		return best, nil
	}
	f, err := solver.AsymByName(name)
	if err != nil {
		return nil, err
	}
	o := solver.Options{Seed: seed}
	if strings.HasPrefix(name, "nojd") && nojdCaps != nil {
		o.Projections, o.Iters = nojdCaps[0], nojdCaps[1]
	}
	return f(ctx, T, k, o)
}

// nojdCaps, from STREAMFIT_ASYM_NOJD=L0,sweeps, caps the asymmetric NOJD
// variants' projections and sweeps per stage: at k = d = 50 with
// non-orthogonal factors the defaults (2·d3 = 100 projections of size
// 100×100, up to 1000 sweeps) spent over 8 CPU minutes in the first stage
// of one solve without stalling.
var nojdCaps []int
