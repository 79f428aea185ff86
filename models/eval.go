package models

import (
	"fmt"
	"math"
)

// FoundL1 is the ℓ1 distance below which a fitted topic counts as recovering
// its matched true topic (the largest possible distance is 2).
const FoundL1 = 0.5

// Evaluation compares a fitted model with the truth after optimally matching
// topics (minimum total ℓ1 distance).
type Evaluation struct {
	K int `json:"k"`
	// TruthK is the number of true topics (may differ from K).
	TruthK int `json:"truth_k"`
	// Match[i] is the true topic matched to fitted topic i (−1 if unmatched).
	Match []int `json:"match"`
	// L1[i] is ‖fitted_i − true_Match[i]‖₁ (NaN-free; unmatched get 2).
	L1     []float64 `json:"l1"`
	MeanL1 float64   `json:"mean_l1"`
	MaxL1  float64   `json:"max_l1"`
	// Found is the number of true topics matched within FoundL1.
	Found int `json:"found"`
	// AlphaRelErr is Σ|α̂ᵢ − α_Match[i]| / Σα over matched pairs.
	AlphaRelErr float64 `json:"alpha_rel_err"`
}

// Evaluate matches the topics of fit to those of truth and measures the
// distances. Both must share the vocabulary size.
func Evaluate(fit, truth *Model) (*Evaluation, error) {
	if fit.D != truth.D {
		return nil, fmt.Errorf("vocabulary sizes differ: model d=%d, truth d=%d", fit.D, truth.D)
	}
	if len(fit.Topics) == 0 || len(truth.Topics) == 0 {
		return nil, fmt.Errorf("nothing to compare: %d fitted and %d true topics", len(fit.Topics), len(truth.Topics))
	}
	kf, kt := len(fit.Topics), len(truth.Topics)
	cost := make([][]float64, kf)
	for i := range cost {
		cost[i] = make([]float64, kt)
		for j := range cost[i] {
			cost[i][j] = L1(fit.Topics[i], truth.Topics[j])
		}
	}
	ev := &Evaluation{K: kf, TruthK: kt, Match: make([]int, kf), L1: make([]float64, kf)}
	var match []int
	var err error
	if kf <= kt {
		match, err = Assign(cost)
	} else {
		// More fitted than true topics: assign the truth to fitted topics.
		tr := make([][]float64, kt)
		for j := range tr {
			tr[j] = make([]float64, kf)
			for i := range kf {
				tr[j][i] = cost[i][j]
			}
		}
		var back []int
		back, err = Assign(tr)
		match = make([]int, kf)
		for i := range match {
			match[i] = -1
		}
		for j, i := range back {
			match[i] = j
		}
	}
	if err != nil {
		return nil, err
	}
	var sumAlpha, errAlpha float64
	for i, j := range match {
		ev.Match[i] = j
		if j < 0 {
			ev.L1[i] = 2
		} else {
			ev.L1[i] = cost[i][j]
			if ev.L1[i] < FoundL1 {
				ev.Found++
			}
			if i < len(fit.Alpha) && j < len(truth.Alpha) {
				errAlpha += math.Abs(fit.Alpha[i] - truth.Alpha[j])
				sumAlpha += truth.Alpha[j]
			}
		}
		ev.MeanL1 += ev.L1[i]
		ev.MaxL1 = math.Max(ev.MaxL1, ev.L1[i])
	}
	ev.MeanL1 /= float64(kf)
	if sumAlpha > 0 {
		ev.AlphaRelErr = errAlpha / sumAlpha
	}
	return ev, nil
}

// L1 is Σ|aᵢ − bᵢ|.
func L1(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("models: L1 of vectors of length %d and %d", len(a), len(b)))
	}
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}
