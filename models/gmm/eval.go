package gmm

import (
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"

	"gonum.org/v1/gonum/mat"
)

// Metrics compare a fitted mixture with the truth after relabelling the
// components to the closest means.
type Metrics struct {
	// Means is ‖M̂ − M‖₂/‖M‖₂ for the d×k mean matrices (spectral norm), the
	// papers' relative error.
	Means float64 `json:"means_rel_err"`
	// Weights is the ℓ1 distance between the weight vectors.
	Weights float64 `json:"weights_l1"`
	// Variances is max |σ̂ᵢ² − σᵢ²|/σᵢ².
	Variances float64 `json:"variances_max_rel_err"`
	// Perm maps truth component i to fitted component Perm[i].
	Perm []int `json:"perm"`
}

// Eval compares est with truth (both read as Models).
func Eval(est, truth *Model) (*Metrics, error) {
	if err := est.validate(); err != nil {
		return nil, err
	}
	if err := truth.validate(); err != nil {
		return nil, err
	}
	if est.K != truth.K || est.D != truth.D {
		return nil, fmt.Errorf("gmm: fitted model is k=%d, d=%d but the truth is k=%d, d=%d", est.K, est.D, truth.K, truth.D)
	}
	k, d := truth.K, truth.D
	cost := make([][]float64, k)
	for i := range k {
		cost[i] = make([]float64, k)
		for j := range k {
			var s float64
			for l := range d {
				x := truth.Means[i][l] - est.Means[j][l]
				s += x * x
			}
			cost[i][j] = s
		}
	}
	perm, err := models.Assign(cost)
	if err != nil {
		return nil, err
	}
	diff := mat.NewDense(d, k, nil)
	ref := mat.NewDense(d, k, nil)
	m := &Metrics{Perm: perm}
	for i, j := range perm {
		for l := range d {
			diff.Set(l, i, est.Means[j][l]-truth.Means[i][l])
			ref.Set(l, i, truth.Means[i][l])
		}
		m.Weights += math.Abs(est.Weights[j] - truth.Weights[i])
		m.Variances = math.Max(m.Variances, math.Abs(est.Variances[j]-truth.Variances[i])/truth.Variances[i])
	}
	m.Means = mat.Norm(diff, 2) / mat.Norm(ref, 2)
	return m, nil
}
