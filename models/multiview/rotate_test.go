package multiview_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// 004 Prop 3.3: a spherical GMM whose means lie on the first three
// coordinate axes has, split into views as it is, views with rank-deficient
// mean matrices (two views see no signal), and the three-view method fails;
// after a random rotation every view sees all k means, and the mean matrix
// reassembled in the original coordinates is recovered.
func TestRotateGMM(t *testing.T) {
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 80000, D: 12, K: 3, Sep: 6, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Put the means on the first three axes: μᵢ = 6eᵢ (the generator
	// shares these slices).
	for i := range src.Truth.Means {
		for j := range 12 {
			src.Truth.Means[i][j] = 0
		}
		src.Truth.Means[i][i] = 6
	}
	// Unrotated, the cross moments support fewer than the 3 classes: the
	// fit says so and gives what they hold (or nothing).
	if m, err := multiview.Fit(context.Background(), src, multiview.Config{K: 3, Seed: 1}); err == nil && (m.K >= 3 || !strings.Contains(strings.Join(m.Warnings(), "\n"), "support")) {
		t.Errorf("the unrotated equal split of axis-aligned means found %d components, warnings %q; want fewer than 3, with a warning (views 2 and 3 carry no signal)", m.K, m.Warnings())
	}
	m, err := multiview.Fit(context.Background(), src, multiview.Config{K: 3, Rotate: true, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	cost := make([][]float64, 3)
	for i := range 3 {
		cost[i] = make([]float64, 3)
		for j := range 3 {
			for l := range 12 {
				d := src.Truth.Means[i][l] - m.Components[j][l]
				cost[i][j] += d * d
			}
		}
	}
	perm, err := models.Assign(cost)
	if err != nil {
		t.Fatal(err)
	}
	diff, ref := mat.NewDense(12, 3, nil), mat.NewDense(12, 3, nil)
	var werr float64
	for i, j := range perm {
		for l := range 12 {
			diff.Set(l, i, m.Components[j][l]-src.Truth.Means[i][l])
			ref.Set(l, i, src.Truth.Means[i][l])
		}
		werr += math.Abs(m.Weights[j] - src.Truth.Weights[i])
	}
	rel := mat.Norm(diff, 2) / mat.Norm(ref, 2)
	t.Logf("rotated: component means rel err %.4f, weights ℓ1 %.4f", rel, werr)
	if rel > 0.05 || werr > 0.05 {
		t.Errorf("component means error %.4f, weights ℓ1 %.4f; want ≤ 0.05", rel, werr)
	}
	if _, err := multiview.Eval(m, &multiview.Model{Model: "multiview", K: 3, D: 12, Views: m.Views, Weights: m.Weights, Means: m.Means}); err == nil || !strings.Contains(err.Error(), "rotated") {
		t.Errorf("eval of a rotated fit against an unrotated truth: %v", err)
	}
}
