package synth

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// Chain snapshots: every row is one-hot, every set has PerSet rows with one
// id, and the state frequencies match the stationary π.
func TestSnapshotsChain(t *testing.T) {
	s, err := NewSnapshots(SnapshotConfig{Sets: 2000, PerSet: 10, K: 4, Seed: 3, BatchRows: 333})
	if err != nil {
		t.Fatal(err)
	}
	all, err := stream.CollectDense(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if all.Rows != 20000 || len(all.Group) != 20000 {
		t.Fatalf("got %d rows, %d ids", all.Rows, len(all.Group))
	}
	freq := make([]float64, 4)
	for i := range all.Rows {
		if all.Group[i] != int64(i/10) {
			t.Fatalf("row %d has set id %d", i, all.Group[i])
		}
		var sum float64
		for j, v := range all.Row(i) {
			sum += v
			freq[j] += v / 20000
		}
		if sum != 1 {
			t.Fatalf("row %d is not one-hot", i)
		}
	}
	// Sets share a Dirichlet start, so the effective sample is nearer 2000
	// than 20000: allow 0.04.
	for j, p := range s.Truth.Pi {
		if math.Abs(freq[j]-p) > 0.04 {
			t.Errorf("state %d frequency %.3f, π = %.3f", j, freq[j], p)
		}
	}
	zeros := 0
	for _, row := range s.Truth.P {
		for _, v := range row {
			if v == 0 {
				zeros++
			}
		}
	}
	if zeros != 1 {
		t.Errorf("P has %d zero entries, want exactly 1", zeros)
	}
}
