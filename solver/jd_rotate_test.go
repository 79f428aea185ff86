package solver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The symmetric sweeps are the general ones: the same rotations to
// rounding, with the matrices kept exactly symmetric.
func TestJacobiSweepSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(70, 71))
	for _, c := range []struct{ d, l int }{{2, 1}, {7, 3}, {20, 10}} {
		gen := randSymSet(c.d, c.l, rng)
		sym := cloneAll(gen)
		scale := 0.0
		for _, a := range gen {
			for _, v := range a {
				scale = math.Max(scale, math.Abs(v))
			}
		}
		xGen, xSym := identity(c.d), identity(c.d)
		for sw := range 4 {
			mg := jacobiSweep(gen, xGen, c.d, 1e-12, false)
			ms := jacobiSweep(sym, xSym, c.d, 1e-12, true)
			if math.Abs(mg-ms) > 1e-9 {
				t.Fatalf("d=%d l=%d sweep %d: largest sine %g (general) against %g (symmetric)", c.d, c.l, sw, mg, ms)
			}
		}
		for k := range sym {
			for i := range c.d {
				for j := range c.d {
					if sym[k][i*c.d+j] != sym[k][j*c.d+i] {
						t.Fatalf("d=%d l=%d: matrix %d not symmetric at (%d,%d)", c.d, c.l, k, i, j)
					}
					if diff := math.Abs(sym[k][i*c.d+j] - gen[k][i*c.d+j]); diff > 1e-9*scale {
						t.Fatalf("d=%d l=%d: matrix %d (%d,%d) = %g symmetric, %g general", c.d, c.l, k, i, j, sym[k][i*c.d+j], gen[k][i*c.d+j])
					}
				}
			}
		}
		for i, v := range xSym {
			if math.Abs(v-xGen[i]) > 1e-9 {
				t.Fatalf("d=%d l=%d: diagonaliser entry %d = %g symmetric, %g general", c.d, c.l, i, v, xGen[i])
			}
		}
	}
}

func identity(d int) []float64 {
	x := make([]float64, d*d)
	for i := range d {
		x[i*d+i] = 1
	}
	return x
}

// BenchmarkJacobiSweep compares a sweep over k×k symmetric slices with
// the general rotation and with the symmetric one (go test ./solver -bench
// JacobiSweep -benchmem).
func BenchmarkJacobiSweep(b *testing.B) {
	for _, c := range []struct{ d, l int }{{50, 50}, {100, 10}} {
		rng := rand.New(rand.NewPCG(72, 73))
		as := randSymSet(c.d, c.l, rng)
		for _, sym := range []bool{false, true} {
			b.Run(fmt.Sprintf("symmetric=%t/k=%d/L=%d", sym, c.d, c.l), func(b *testing.B) {
				x := identity(c.d)
				for b.Loop() {
					jacobiSweep(as, x, c.d, 0, sym)
				}
			})
		}
	}
}
