package synth

import (
	"context"
	"math"
	"strings"
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

// A set larger than a batch is cut into batches of BatchRows rows; the
// pieces of one set share its Dirichlet proportions, so its state
// frequencies are those of one draw: within-set frequencies vary far more
// than the multinomial noise alone would allow (and two passes agree).
func TestSnapshotsLargeSetsChunked(t *testing.T) {
	const per, batch = 3000, 512
	s, err := NewSnapshots(SnapshotConfig{Sets: 40, PerSet: per, K: 3, Seed: 5, BatchRows: batch, Alpha0: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	for b, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Rows > batch {
			t.Fatalf("batch of %d rows, want at most %d", b.Rows, batch)
		}
		for i := range b.Rows {
			if want := (b.Start + int64(i)) / per; b.Group[i] != want {
				t.Fatalf("row %d has set %d, want %d", b.Start+int64(i), b.Group[i], want)
			}
		}
		rows += b.Rows
		b.Release()
	}
	if rows != 40*per {
		t.Fatalf("%d rows, want %d", rows, 40*per)
	}
	a, _ := stream.CollectDense(context.Background(), s)
	b, _ := stream.CollectDense(context.Background(), s)
	for i := range a.Data {
		if a.Data[i] != b.Data[i] {
			t.Fatal("two passes differ")
		}
	}
	// Frequency of state 0 in the first and second half of each set: equal
	// up to multinomial noise (sd ≈ 0.013 for 1500 points) when both halves
	// share the set's proportions, unrelated otherwise.
	var worst float64
	for set := range 40 {
		var f [2]float64
		for h := range 2 {
			for i := range per / 2 {
				f[h] += a.Row(set*per + h*per/2 + i)[0] / (per / 2)
			}
		}
		worst = math.Max(worst, math.Abs(f[0]-f[1]))
	}
	if worst > 0.08 {
		t.Errorf("set halves differ by up to %.3f in state-0 frequency: parts do not share the set's proportions", worst)
	}
}

// A P that cannot be drawn (k = 12 states cannot all be 0.15/k apart in
// practice) is an error, not an endless loop.
func TestSnapshotsDrawFails(t *testing.T) {
	if _, err := NewSnapshots(SnapshotConfig{Sets: 1, PerSet: 3, K: 12, Seed: 1}); err == nil || !strings.Contains(err.Error(), "give P") {
		t.Errorf("got %v", err)
	}
}

// Two states cannot be drawn by the stay family (P's zero entry and its
// zero-diagonal part would empty a column, and the draw would never end):
// an error naming the way out. A given non-ergodic P is refused too.
func TestSnapshotsTwoStates(t *testing.T) {
	if _, err := NewSnapshots(SnapshotConfig{Sets: 1, PerSet: 3, K: 2, M: 4, Seed: 1}); err == nil || !strings.Contains(err.Error(), "give P") {
		t.Errorf("k=2, stay family: got %v", err)
	}
	s, err := NewSnapshots(SnapshotConfig{Sets: 2, PerSet: 3, K: 2, Seed: 1, P: [][]float64{{0.8, 0.3}, {0.2, 0.7}}})
	if err != nil {
		t.Fatalf("k=2 with a given ergodic P: %v", err)
	}
	if p := s.Truth.Pi; math.Abs(p[0]-0.6) > 1e-9 || math.Abs(p[1]-0.4) > 1e-9 {
		t.Errorf("stationary distribution %v, want [0.6 0.4]", p)
	}
}
