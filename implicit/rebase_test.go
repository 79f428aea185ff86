package implicit

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// TestTripleRebase: statistics gathered over q and rebased to w = q·c,
// with the cubes of a sample summed afterwards from its kept documents
// (Presampled), equal one pass whitened by w with that sample, total by
// total, to float64 rounding; and their moments agree.
func TestTripleRebase(t *testing.T) {
	const d, l, k = 40, 8, 5
	docs, _ := tinyCorpus(3000, d, 43)
	q, c := randDense(d, l, 45), randDense(l, k, 46)
	var w mat.Dense
	w.Mul(q, c)
	ctx := context.Background()
	for _, cubes := range []DocSample{{}, {Rate: 0.3, Seed: 3}} {
		for _, pair := range []bool{true, false} {
			want := NewTripleAcc(d, k)
			want.Cubes = cubes
			if !pair {
				want.SkipPair()
			}
			if err := want.Pass(ctx, batches(docs, 64, -1), 1, &w, nil); err != nil {
				t.Fatal(err)
			}
			overQ := NewTripleAccNoCubes(d, l)
			if err := overQ.Pass(ctx, batches(docs, 64, -1), 3, q, nil); err != nil {
				t.Fatal(err)
			}
			got := overQ.Rebase(c, &w, pair)
			if got.NoPair == pair || got.Docs != want.Docs || got.Skipped != want.Skipped {
				t.Fatalf("rebased: NoPair %v, %d docs (%d skipped), want %v, %d (%d)", got.NoPair, got.Docs, got.Skipped, !pair, want.Docs, want.Skipped)
			}
			kept := &stream.Docs{Offsets: []int{0}}
			keeps := cubes.Keeps()
			for i := range docs.Len() {
				if keeps(int64(i)) {
					kept.AppendDoc(docs.Doc(i))
				}
			}
			s := NewTripleAcc(d, k)
			s.SkipPair()
			s.Cubes, s.Presampled = cubes, true
			if err := s.Pass(ctx, batches(kept, 64, -1), 2, &w, nil); err != nil {
				t.Fatal(err)
			}
			if err := got.TakeCubes(s); err != nil {
				t.Fatal(err)
			}
			for _, p := range []struct {
				name     string
				got, exp []float64
			}{{"Y3", got.Y3, want.Y3}, {"CubeSq", got.CubeSq, want.CubeSq}, {"Z", got.Z, want.Z}, {"Z2", got.Z2, want.Z2}, {"G3", got.G3, want.G3}, {"M1", got.M1, want.M1}} {
				if len(p.got) != len(p.exp) {
					t.Fatalf("cubes %+v, pair %v: %s has %d values, want %d", cubes, pair, p.name, len(p.got), len(p.exp))
				}
				if e := relDiff(p.got, p.exp); e > 1e-12 {
					t.Errorf("cubes %+v, pair %v: %s differs by %.3g (relative)", cubes, pair, p.name, e)
				}
			}
			if math.Abs(got.CubeStdErr()-want.CubeStdErr()) > 1e-12*want.CubeStdErr() {
				t.Errorf("cube sample's error %g, want %g", got.CubeStdErr(), want.CubeStdErr())
			}
			if pair {
				gm, err := got.Moments(&w, 1)
				if err != nil {
					t.Fatal(err)
				}
				wm, err := want.Moments(&w, 1)
				if err != nil {
					t.Fatal(err)
				}
				if e := relDiff(gm.E3.Data, wm.E3.Data); e > 1e-12 {
					t.Errorf("cubes %+v: E3 differs by %.3g", cubes, e)
				}
			}
		}
	}
	overQ := NewTripleAccNoCubes(d, l)
	if err := overQ.Pass(ctx, batches(docs, 64, -1), 1, q, nil); err != nil {
		t.Fatal(err)
	}
	other := NewTripleAcc(d, k)
	if err := other.Pass(ctx, batches(docs, 64, -1), 1, randDense(d, k, 47), nil); err != nil {
		t.Fatal(err)
	}
	if err := overQ.Rebase(c, &w, true).TakeCubes(other); err == nil {
		t.Errorf("cubes whitened by another W taken")
	}
}

// relDiff is max|a−b| / max|b|.
func relDiff(a, b []float64) float64 {
	var e, m float64
	for i := range b {
		e = math.Max(e, math.Abs(a[i]-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	if m == 0 {
		return e
	}
	return e / m
}
