package models

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Assign solves the assignment problem for an n×m cost matrix with n ≤ m:
// it returns, for each row i, a distinct column match[i] minimising
// Σ cost[i][match[i]]. It is the Hungarian algorithm with row and column
// potentials (shortest augmenting paths), O(n²m).
func Assign(cost [][]float64) ([]int, error) {
	n := len(cost)
	if n == 0 {
		return nil, nil
	}
	m := len(cost[0])
	if n > m {
		return nil, fmt.Errorf("models: Assign needs rows ≤ columns, got %d×%d", n, m)
	}
	for i, row := range cost {
		if len(row) != m {
			return nil, fmt.Errorf("models: Assign: row %d has %d entries, want %d", i, len(row), m)
		}
		for _, c := range row {
			if math.IsNaN(c) || math.IsInf(c, 0) {
				return nil, fmt.Errorf("models: Assign: cost row %d is not finite", i)
			}
		}
	}
	// 1-based arrays; column 0 is the virtual start of each augmenting path.
	u := make([]float64, n+1) // row potentials
	v := make([]float64, m+1) // column potentials
	p := make([]int, m+1)     // p[j]: row matched to column j (0 = none)
	way := make([]int, m+1)   // previous column on the shortest path
	minv := make([]float64, m+1)
	used := make([]bool, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if cur := cost[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	match := make([]int, n)
	for j := 1; j <= m; j++ {
		if p[j] != 0 {
			match[p[j]-1] = j - 1
		}
	}
	return match, nil
}

// MatchNearest relabels fitted components to the truth: truth component i is
// matched to fitted component perm[i] so that the summed squared Euclidean
// distance between the matched vectors (truth[i] and est[perm[i]], all of one
// length) is least (Assign on those distances).
func MatchNearest(truth, est [][]float64) ([]int, error) {
	cost := make([][]float64, len(truth))
	for i, a := range truth {
		cost[i] = make([]float64, len(est))
		for j, b := range est {
			for l, v := range a {
				x := v - b[l]
				cost[i][j] += x * x
			}
		}
	}
	return Assign(cost)
}

// RelErrCols is the relative spectral-norm error ‖Â − A‖₂/‖A‖₂ of matrices
// given by their columns after relabelling: column i of A is truth[i], column
// i of Â is est[perm[i]].
func RelErrCols(est, truth [][]float64, perm []int) float64 {
	d, k := len(truth[0]), len(truth)
	diff, ref := mat.NewDense(d, k, nil), mat.NewDense(d, k, nil)
	for i, j := range perm {
		for l := range d {
			ref.Set(l, i, truth[i][l])
			diff.Set(l, i, est[j][l]-truth[i][l])
		}
	}
	return mat.Norm(diff, 2) / mat.Norm(ref, 2)
}

// RelErrSquare is the relative spectral-norm error of k×k matrices (given by
// their rows) over the same k labels, after relabelling both rows and columns:
// entry (i,j) of the truth is compared with entry (perm[i],perm[j]) of est.
func RelErrSquare(est, truth [][]float64, perm []int) float64 {
	k := len(truth)
	diff, ref := mat.NewDense(k, k, nil), mat.NewDense(k, k, nil)
	for i := range k {
		for j := range k {
			ref.Set(i, j, truth[i][j])
			diff.Set(i, j, est[perm[i]][perm[j]]-truth[i][j])
		}
	}
	return mat.Norm(diff, 2) / mat.Norm(ref, 2)
}

// CheckPair is the common start of every model's Eval: est and truth must
// each be a valid model (validate) of the same k and d (dims); name prefixes
// the error.
func CheckPair[M any](name string, est, truth M, validate func(M) error, dims func(M) (k, d int)) error {
	if err := validate(est); err != nil {
		return err
	}
	if err := validate(truth); err != nil {
		return err
	}
	ek, ed := dims(est)
	tk, td := dims(truth)
	if ek != tk || ed != td {
		return fmt.Errorf("%s: fitted model is k=%d, d=%d but the truth is k=%d, d=%d", name, ek, ed, tk, td)
	}
	return nil
}
