package gmm

import (
	"math"

	"github.com/streamfit/streamfit/models"
)

// Metrics compare a fitted mixture with the truth after relabelling the
// components to the closest means.
type Metrics struct {
	// Means is ‖M̂ − M‖₂/‖M‖₂ for the d×k mean matrices (spectral norm), the
	// papers' relative error.
	Means float64 `json:"means_rel_err"`
	// Weights is the ℓ1 distance between the weight vectors.
	Weights float64 `json:"weights_l1"`
	// Variances is max |σ̂ᵢ² − σᵢ²|/σᵢ², over the features too (σᵢⱼ²) when
	// either mixture is diagonal.
	Variances float64 `json:"variances_max_rel_err"`
	// Perm maps truth component i to fitted component Perm[i].
	Perm []int `json:"perm"`
}

// Eval compares est with truth (both read as Models).
func Eval(est, truth *Model) (*Metrics, error) {
	if err := models.CheckPair("gmm", est, truth, (*Model).validate, (*Model).dims); err != nil {
		return nil, err
	}
	perm, err := models.MatchNearest(truth.Means, est.Means)
	if err != nil {
		return nil, err
	}
	m := &Metrics{Perm: perm, Means: models.RelErrCols(est.Means, truth.Means, perm)}
	for i, j := range perm {
		m.Weights += math.Abs(est.Weights[j] - truth.Weights[i])
		for f := range truth.D {
			t := truth.Variance(i, f)
			m.Variances = math.Max(m.Variances, math.Abs(est.Variance(j, f)-t)/t)
		}
	}
	return m, nil
}
