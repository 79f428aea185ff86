package models

import (
	"slices"
)

// ProjectSimplex replaces v by its Euclidean projection onto the probability
// simplex {x ≥ 0, Σx = 1} (docs/MATH.md §4.8): max(v − τ, 0) with the threshold τ
// found from the sorted entries. Estimated topics come out of the tensor
// decomposition with small negative entries and a sum only near 1; this is the
// closest distribution to them. It returns the ℓ1 distance moved.
func ProjectSimplex(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	u := slices.Clone(v)
	slices.Sort(u)
	slices.Reverse(u)
	var cum, tau float64
	for j, x := range u {
		cum += x
		t := (cum - 1) / float64(j+1)
		if x-t > 0 {
			tau = t
		}
	}
	moved := 0.0
	for i, x := range v {
		y := max(x-tau, 0)
		moved += abs(y - x)
		v[i] = y
	}
	return moved
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
