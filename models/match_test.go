package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(int)
	rec = func(i int) {
		if i == n {
			f(p)
			return
		}
		for j := i; j < n; j++ {
			p[i], p[j] = p[j], p[i]
			rec(i + 1)
			p[i], p[j] = p[j], p[i]
		}
	}
	rec(0)
}

// TestMatchNearestBruteForce: the matching has the least summed squared
// distance of all permutations, and a relabelled copy of the truth is matched
// back exactly with zero relative errors.
func TestMatchNearestBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		k, d := 2+trial%4, 1+trial%5
		truth, est := make([][]float64, k), make([][]float64, k)
		for i := range k {
			truth[i], est[i] = make([]float64, d), make([]float64, d)
			for l := range d {
				truth[i][l], est[i][l] = rng.NormFloat64(), rng.NormFloat64()
			}
		}
		cost := func(p []int) float64 {
			s := 0.0
			for i, j := range p {
				for l := range d {
					x := truth[i][l] - est[j][l]
					s += x * x
				}
			}
			return s
		}
		perm, err := MatchNearest(truth, est)
		if err != nil {
			t.Fatal(err)
		}
		best := math.Inf(1)
		permutations(k, func(p []int) { best = math.Min(best, cost(p)) })
		if got := cost(perm); got > best+1e-12 {
			t.Errorf("trial %d: matching cost %g, best permutation %g", trial, got, best)
		}

		q := rng.Perm(k)
		moved := make([][]float64, k)
		for i, j := range q {
			moved[j] = truth[i]
		}
		perm, err = MatchNearest(truth, moved)
		if err != nil {
			t.Fatal(err)
		}
		for i := range k {
			if perm[i] != q[i] {
				t.Fatalf("trial %d: relabelled copy matched %v, want %v", trial, perm, q)
			}
		}
		if e := RelErrCols(moved, truth, perm); e != 0 {
			t.Errorf("trial %d: relative error of a relabelled copy %g", trial, e)
		}
	}
}

// TestRelErrSquare: relabelling rows and columns of a square matrix by the
// same permutation is undone, and a perturbation of one entry gives
// |δ|/‖A‖₂.
func TestRelErrSquare(t *testing.T) {
	truth := [][]float64{{4, 1, 0}, {1, 3, 1}, {0, 1, 2}}
	q := []int{2, 0, 1}
	est := make([][]float64, 3)
	for i := range est {
		est[i] = make([]float64, 3)
	}
	for i := range 3 {
		for j := range 3 {
			est[q[i]][q[j]] = truth[i][j]
		}
	}
	if e := RelErrSquare(est, truth, q); e != 0 {
		t.Errorf("relabelled copy: relative error %g", e)
	}
	est[q[1]][q[2]] += 0.5
	ref := mat.NewDense(3, 3, nil)
	for i := range 3 {
		ref.SetRow(i, truth[i])
	}
	if e, want := RelErrSquare(est, truth, q), 0.5/mat.Norm(ref, 2); math.Abs(e-want) > 1e-12 {
		t.Errorf("one perturbed entry: relative error %g, want %g", e, want)
	}
}
