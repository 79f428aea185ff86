package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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

// CheckPair refuses an invalid model (fitted or true) and models of
// different shapes, naming the model, and accepts a valid pair.
func TestCheckPair(t *testing.T) {
	type shape struct{ k, d int }
	valid := func(s shape) error {
		if s.k <= 0 {
			return fmt.Errorf("k=%d", s.k)
		}
		return nil
	}
	dims := func(s shape) (int, int) { return s.k, s.d }
	if err := CheckPair("m", shape{2, 3}, shape{2, 3}, valid, dims); err != nil {
		t.Fatalf("valid pair refused: %v", err)
	}
	for _, c := range []struct{ est, truth shape }{{shape{0, 3}, shape{2, 3}}, {shape{2, 3}, shape{0, 3}}} {
		if err := CheckPair("m", c.est, c.truth, valid, dims); err == nil || err.Error() != "k=0" {
			t.Errorf("%v vs %v: err %v, want the validation error", c.est, c.truth, err)
		}
	}
	err := CheckPair("gmm", shape{2, 3}, shape{2, 4}, valid, dims)
	if err == nil || !strings.HasPrefix(err.Error(), "gmm: ") || !strings.Contains(err.Error(), "d=4") {
		t.Errorf("different d: err %v", err)
	}
}
