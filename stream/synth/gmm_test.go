package synth

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// The sample mean of a GMM table must match Σ wᵢμᵢ within a few standard
// errors, and the rows must not depend on the number of workers.
func TestGMMMeanAndDeterminism(t *testing.T) {
	ctx := context.Background()
	a, err := NewGMM(GMMConfig{Rows: 20000, D: 5, K: 3, Seed: 7, BatchRows: 777, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewGMM(GMMConfig{Rows: 20000, D: 5, K: 3, Seed: 7, BatchRows: 777, Workers: 3})
	da, err := stream.CollectDense(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := stream.CollectDense(ctx, b)
	if da.Rows != 20000 || da.Cols != 5 {
		t.Fatalf("got %d×%d", da.Rows, da.Cols)
	}
	for i := range da.Data {
		if da.Data[i] != db.Data[i] {
			t.Fatal("rows depend on the number of workers")
		}
	}
	tr := a.Truth
	for j := range tr.D {
		var want, got float64
		for i := range tr.K {
			want += tr.Weights[i] * tr.Means[i][j]
		}
		for r := range da.Rows {
			got += da.Row(r)[j]
		}
		got /= float64(da.Rows)
		// Standard error ≤ √(Var x_j / n) with Var ≤ σ² + sep²: about 0.03.
		if math.Abs(got-want) > 0.15 {
			t.Errorf("column %d mean %.3f, want %.3f", j, got, want)
		}
	}
}
