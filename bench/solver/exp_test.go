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

func gate(t *testing.T) {
	if os.Getenv("STREAMFIT_BENCH") == "" {
		t.Skip("set STREAMFIT_BENCH=1 to run the experiments")
	}
}

func gauss(r, c int, rng *rand.Rand) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func unitCols(m *mat.Dense) {
	r, c := m.Dims()
	for j := 0; j < c; j++ {
		n := mat.Norm(m.ColView(j), 2)
		for i := 0; i < r; i++ {
			m.Set(i, j, m.At(i, j)/n)
		}
	}
}

func ortho(d, k int, rng *rand.Rand) *mat.Dense {
	var qr mat.QR
	qr.Factorize(gauss(d, k, rng))
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, d, 0, k))
}

// noise is a symmetric Gaussian tensor with Frobenius norm eps.
func noise(d int, eps float64, rng *rand.Rand) *solver.Sym3 {
	e := solver.NewSym3(d)
	for i := range e.Data {
		e.Data[i] = rng.NormFloat64()
	}
	e.Invalidate()
	e.Scale(eps / math.Sqrt(e.FrobeniusSq()))
	return e
}

// meanErr is (1/k)Σ‖u_i − ũ_i‖ after matching and sign ([003] §8); a
// missing factor counts as distance √2.
func meanErr(truth, est *mat.Dense) float64 {
	if est == nil {
		return math.Sqrt2
	}
	_, dist := solver.MatchColumns(truth, est)
	s := 0.0
	for _, x := range dist {
		if math.IsNaN(x) {
			x = math.Sqrt2
		}
		s += x
	}
	return s / float64(len(dist))
}

// TestNoiseSweep: [003] accuracy versus noise, T = Σπ_i u_i⊗3 + εR with
// π_i = 1 + U(0,1), ‖R‖_F = 1.
func TestNoiseSweep(t *testing.T) {
	gate(t)
	ctx := context.Background()
	trials := 5
	for _, orthoCase := range []bool{true, false} {
		methods := []string{"rtpm", "ojd0", "ojd", "als"}
		if !orthoCase {
			methods = []string{"nojd0", "nojd", "als", "alt"}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s factors, mean factor error over %d trials\n\n| d | k | ε | %s |\n|---|---|---|%s\n",
			map[bool]string{true: "orthogonal", false: "non-orthogonal"}[orthoCase], trials, strings.Join(methods, " | "), strings.Repeat("---|", len(methods)))
		for _, d := range []int{25, 50} {
			for _, k := range []int{d / 5, d} {
				for _, eps := range []float64{0.01, 0.05, 0.2} {
					sums := make([]float64, len(methods))
					for tr := 0; tr < trials; tr++ {
						rng := rand.New(rand.NewPCG(uint64(d*1000+k), uint64(tr)))
						var u *mat.Dense
						if orthoCase {
							u = ortho(d, k, rng)
						} else {
							u = gauss(d, k, rng)
							unitCols(u)
						}
						w := make([]float64, k)
						for i := range w {
							w[i] = 1 + rng.Float64()
						}
						T := solver.FromFactors(w, u)
						T.AddTensor(noise(d, eps, rng))
						for m, name := range methods {
							f, _ := solver.ByName(name)
							res, _ := f(ctx, T, k, solver.Options{Seed: uint64(tr)})
							var est *mat.Dense
							if res != nil {
								est = res.Factors
							}
							sums[m] += meanErr(u, est)
						}
					}
					fmt.Fprintf(&b, "| %d | %d | %g |", d, k, eps)
					for _, s := range sums {
						fmt.Fprintf(&b, " %.4f |", s/float64(trials))
					}
					b.WriteString("\n")
				}
			}
		}
		t.Log(b.String())
	}
}

// TestProjections: [003] Fig. 1, d = k = 10, orthogonal ε = 0.05: error of
// one-stage OJD against the number of random projections, and OJD1 (plug-in).
func TestProjections(t *testing.T) {
	gate(t)
	ctx := context.Background()
	d, trials := 10, 50
	var b strings.Builder
	fmt.Fprintf(&b, "\nd=k=10, ε=0.05 (‖R‖_F), %d trials\n\n| L0 | OJD0 (random) | OJD1 (random + plug-in) |\n|---|---|---|\n", trials)
	for _, l0 := range []int{2, 5, 10, 20, 40, 80} {
		var s0, s1 float64
		for tr := 0; tr < trials; tr++ {
			rng := rand.New(rand.NewPCG(77, uint64(tr)))
			u := ortho(d, d, rng)
			w := make([]float64, d)
			for i := range w {
				w[i] = 1 + rng.Float64()
			}
			T := solver.FromFactors(w, u)
			T.AddTensor(noise(d, 0.05, rng))
			r0, _ := solver.JointDiag(ctx, T, d, solver.Options{Seed: uint64(tr), Projections: l0}, solver.Orthogonal, false)
			r1, _ := solver.JointDiag(ctx, T, d, solver.Options{Seed: uint64(tr), Projections: l0}, solver.Orthogonal, true)
			s0 += meanErr(u, r0.Factors)
			s1 += meanErr(u, r1.Factors)
		}
		fmt.Fprintf(&b, "| %d | %.4f | %.4f |\n", l0, s0/float64(trials), s1/float64(trials))
	}
	t.Log(b.String())
}

// TestTable1: [002] App. B Table 1 — three-view mixture, d = 100, n = 1000
// samples (each component n/k times), unit factors, view noise ζ√d = 0.1,
// random initialisation, sample-form updates (never forming T).
func TestTable1(t *testing.T) {
	gate(t)
	ctx := context.Background()
	d, n := 100, 1000
	zeta := 0.1 / math.Sqrt(float64(d))
	ks := []int{10, 20, 50, 100}
	if os.Getenv("STREAMFIT_BENCH") == "full" {
		ks = append(ks, 200, 500)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| k | starts | found | avg sq. error | avg weight err | avg #iters | sq.err/k | w.err/k | seconds |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range ks {
		rng := rand.New(rand.NewPCG(1, uint64(k)))
		a, bb, c := gauss(d, k, rng), gauss(d, k, rng), gauss(d, k, rng)
		unitCols(a)
		unitCols(bb)
		unitCols(c)
		x1, x2, x3 := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
		for l := 0; l < n; l++ {
			h := l % k
			for i := 0; i < d; i++ {
				x1.Set(l, i, a.At(i, h)+zeta*rng.NormFloat64())
				x2.Set(l, i, bb.At(i, h)+zeta*rng.NormFloat64())
				x3.Set(l, i, c.At(i, h)+zeta*rng.NormFloat64())
			}
		}
		st := solver.SampleTensor{V: solver.DenseViews{X1: x1, X2: x2, X3: x3}}
		starts := 10 * k
		t0 := time.Now()
		cp, _ := solver.Alt(ctx, st, k, solver.Options{Seed: 3, Restarts: starts, Iters: 100, Tol: 1e-10}, solver.AltOptions{})
		sec := time.Since(t0).Seconds()
		wtrue := 1 / float64(k)
		ma, da := solver.MatchColumns(a, cp.A)
		_, db := solver.MatchColumns(bb, cp.B)
		_, dc := solver.MatchColumns(c, cp.C)
		var sq, we float64
		cnt := 0
		for i := range ma {
			if ma[i] < 0 || da[i] > 0.5 {
				continue
			}
			cnt++
			sq += (da[i]*da[i] + db[i]*db[i] + dc[i]*dc[i]) / 3
			dw := cp.W[ma[i]] - wtrue
			we += dw * dw / (wtrue * wtrue)
		}
		sq /= float64(max(cnt, 1))
		we /= float64(max(cnt, 1))
		fmt.Fprintf(&b, "| %d | %d | %d/%d | %.3g | %.3g | %.2f | %.3g | %.3g | %.1f |\n", k, starts, cnt, k, sq, we, cp.Iters, sq/float64(k), we/float64(k), sec)
	}
	t.Log(b.String())
}

// TestCost: seconds per solve of a noiseless orthogonal tensor as k grows (d = k).
func TestCost(t *testing.T) {
	gate(t)
	ctx := context.Background()
	names := []string{"rtpm", "rtpm-stop", "ojd", "nojd", "als", "alt"}
	var b strings.Builder
	fmt.Fprintf(&b, "\nseconds per solve, explicit Sym3, d = k, orthogonal factors, ε = 0.01\n\n| k | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, k := range []int{10, 20, 40, 80} {
		rng := rand.New(rand.NewPCG(5, uint64(k)))
		u := ortho(k, k, rng)
		w := make([]float64, k)
		for i := range w {
			w[i] = 1 + rng.Float64()
		}
		T := solver.FromFactors(w, u)
		T.AddTensor(noise(k, 0.01, rng))
		fmt.Fprintf(&b, "| %d |", k)
		for _, name := range names {
			f, _ := solver.ByName(name)
			t0 := time.Now()
			res, err := f(ctx, T, k, solver.Options{Seed: 1})
			sec := time.Since(t0).Seconds()
			e := math.NaN()
			if res != nil && res.Factors != nil {
				e = meanErr(u, res.Factors)
			}
			_ = err
			fmt.Fprintf(&b, " %.3f (err %.3f) |", sec, e)
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}
