package markov

import (
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// Metrics are 001 §4's relative spectral-norm errors ‖X̂ − X‖₂/‖X‖₂ after
// relabelling, and the ℓ1 error of π.
type Metrics struct {
	P  float64 `json:"P_rel_err"`
	T  float64 `json:"T_rel_err,omitempty"`
	U  float64 `json:"U_rel_err,omitempty"`
	UT float64 `json:"UT_rel_err,omitempty"`
	Pi float64 `json:"pi_l1"`
	R  float64 `json:"r_abs_err"`
	// Perm maps true hidden state i to fitted state Perm[i] (HMM; identity
	// for a chain, whose states are observed).
	Perm []int `json:"perm"`
}

// Eval compares a fit with the truth. HMM states are matched by the
// Hungarian assignment on the columns of U.
func Eval(est, truth *Model) (*Metrics, error) {
	if err := models.CheckPair("markov", est, truth, (*Model).validate, (*Model).dims); err != nil {
		return nil, err
	}
	k := truth.K
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	m := &Metrics{R: math.Abs(est.R - truth.R)}
	if truth.U != nil {
		if est.U == nil || est.UT == nil {
			return nil, fmt.Errorf("markov: the truth is an HMM but the fit has no U")
		}
		var err error
		if perm, err = models.MatchNearest(truth.U, est.U); err != nil {
			return nil, err
		}
		m.U = models.RelErrCols(est.U, truth.U, perm)
		m.UT = models.RelErrCols(est.UT, truth.UT, perm)
	}
	if truth.T != nil && est.T != nil {
		m.T = models.RelErrSquare(est.T, truth.T, perm)
	}
	m.P = models.RelErrSquare(est.P, truth.P, perm)
	for i, j := range perm {
		m.Pi += math.Abs(est.Pi[j] - truth.Pi[i])
	}
	m.Perm = perm
	return m, nil
}
