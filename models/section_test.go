package models

import (
	"math"
	"testing"
)

// TestStationary checks the stationary distribution against the power
// method on a column-stochastic matrix, and refuses a matrix whose
// eigenvector is of both signs.
func TestStationary(t *testing.T) {
	p := [][]float64{{0.9, 0.2, 0.1}, {0.05, 0.7, 0.3}, {0.05, 0.1, 0.6}}
	pi, ok := stationary(p)
	if !ok {
		t.Fatal("no stationary distribution")
	}
	v := []float64{1, 0, 0}
	for range 2000 {
		n := make([]float64, 3)
		for i := range 3 {
			for j := range 3 {
				n[i] += p[i][j] * v[j]
			}
		}
		v = n
	}
	for i := range 3 {
		if math.Abs(pi[i]-v[i]) > 1e-9 {
			t.Errorf("π = %v, power method %v", pi, v)
		}
	}
	// Columns summing to 1 with a negative entry: the eigenvector of the
	// eigenvalue 1 is (0.8, −0.5), of both signs.
	if pi, ok := stationary([][]float64{{0.5, -0.8}, {0.5, 1.8}}); ok {
		t.Errorf("a matrix with no one-signed eigenvector was given the stationary distribution %v", pi)
	}
}
