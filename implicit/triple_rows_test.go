package implicit

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestOnRows checks the per-batch row hook: in batch order for any number of
// workers, the rows are y = Wᵀc of the usable documents in document order
// (brute force) with 1/n3, in float64 and in float32 partials; and the pass
// without cubes gathers the same statistics bit for bit, with no Y3 and no E3.
func TestOnRows(t *testing.T) {
	const d, k = 40, 5
	docs, toks := tinyCorpus(1500, d, 31)
	w := randDense(d, k, 32)
	// Brute force: y and 1/n3 of every usable document.
	var want, wantInv []float64
	for _, tk := range toks {
		l := len(tk)
		if l < MinTokens {
			continue
		}
		y := make([]float64, k)
		for _, term := range tk {
			for a := range k {
				y[a] += w.At(term, a)
			}
		}
		want = append(want, y...)
		wantInv = append(wantInv, 1/float64(l*(l-1)*(l-2)))
	}
	full := NewTripleAcc(d, k)
	if err := full.Pass(context.Background(), batches(docs, 64, -1), 1, w, nil); err != nil {
		t.Fatal(err)
	}
	for _, f32 := range []bool{false, true} {
		for _, workers := range []int{1, 2, 5} {
			acc := NewTripleAccNoCubes(d, k)
			acc.Float32 = f32
			var got, gotInv []float64
			acc.OnRows = func(y, inv3 []float64) error {
				if len(y) != len(inv3)*k {
					t.Fatalf("OnRows: %d values for %d rows", len(y), len(inv3))
				}
				got = append(got, y...)
				gotInv = append(gotInv, inv3...)
				return nil
			}
			if err := acc.Pass(context.Background(), batches(docs, 64, -1), workers, w, nil); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(gotInv) != len(wantInv) {
				t.Fatalf("f32=%v workers=%d: %d rows, want %d", f32, workers, len(gotInv), len(wantInv))
			}
			for i := range wantInv {
				if !near(gotInv[i], wantInv[i], 1e-15, wantInv[i]) {
					t.Fatalf("f32=%v workers=%d: 1/n3 of row %d = %g, want %g", f32, workers, i, gotInv[i], wantInv[i])
				}
			}
			// Sums of at most 7 terms of size ~1: float64 rounding is 1e-15,
			// float32's 1e-7 relative.
			tol := 1e-13
			if f32 {
				tol = 1e-6
			}
			for i := range want {
				if !near(got[i], want[i], tol, 1+math.Abs(want[i])) {
					t.Fatalf("f32=%v workers=%d: y[%d] = %g, brute force %g", f32, workers, i, got[i], want[i])
				}
			}
			if acc.Y3 != nil {
				t.Fatal("NoCubes statistics allocated Y3")
			}
			if f32 {
				continue
			}
			// Without cubes the other sums are the full pass's, bit for bit.
			for _, s := range [][2][]float64{{acc.Z, full.Z}, {acc.Z2, full.Z2}, {acc.G2, full.G2}, {acc.G3, full.G3}, {acc.M1, full.M1}} {
				if !slices.Equal(s[0], s[1]) {
					t.Fatalf("workers=%d: statistics without cubes differ from the full pass", workers)
				}
			}
			mom, err := acc.Moments(w, 2)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := full.Moments(w, 2)
			if err != nil {
				t.Fatal(err)
			}
			if mom.E3 != nil || !mat.Equal(mom.E2, ref.E2) || !mat.Equal(mom.E2W, ref.E2W) || !slices.Equal(mom.M1, ref.M1) {
				t.Fatal("Moments without cubes: want E3 nil and the pair moments of the full pass")
			}
		}
	}
	if err := full.Merge(NewTripleAccNoCubes(d, k)); err == nil {
		t.Fatal("merging statistics with and without cubes succeeded")
	}
}

// TestOnRowsError checks that an error of the hook stops the pass early and
// is what the pass returns.
func TestOnRowsError(t *testing.T) {
	const d, k = 40, 5
	docs, _ := tinyCorpus(3000, d, 33)
	w := randDense(d, k, 34)
	hookErr := errors.New("disk full")
	for _, workers := range []int{1, 2, 4} {
		acc := NewTripleAccNoCubes(d, k)
		calls := 0
		acc.OnRows = func(y, inv3 []float64) error {
			calls++
			if calls == 3 {
				return hookErr
			}
			return nil
		}
		batchesSeen := 0
		err := acc.Pass(context.Background(), batches(docs, 50, -1), workers, w, func(int) { batchesSeen++ })
		if !errors.Is(err, hookErr) {
			t.Fatalf("workers=%d: pass returned %v, want the hook's error", workers, err)
		}
		if calls != 3 {
			t.Fatalf("workers=%d: hook called %d times after failing on call 3", workers, calls)
		}
		if batchesSeen != 2 {
			t.Fatalf("workers=%d: %d batches reported done, want the 2 before the hook failed", workers, batchesSeen)
		}
	}
}

// TestAggregatedPlusRows checks that the aggregated operator of statistics
// without cubes plus the rows' term Σ (yᵀθ)² y/n3 / N (from OnRows) is the
// explicit tensor's T(I,θ,θ).
func TestAggregatedPlusRows(t *testing.T) {
	const d, k, l = 30, 4, 3
	docs, _ := tinyCorpus(800, d, 35)
	w := randDense(d, k, 36)
	theta := randDense(k, l, 37)
	full := NewTripleAcc(d, k)
	full.Add(docs, w)
	mom, err := full.Moments(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	acc := NewTripleAccNoCubes(d, k)
	rows := mat.NewDense(k, l, nil)
	acc.OnRows = func(y, inv3 []float64) error {
		for r, s := range inv3 {
			yr := y[r*k : (r+1)*k]
			for j := range l {
				var p float64
				for a := range k {
					p += yr[a] * theta.At(a, j)
				}
				for a := range k {
					rows.Set(a, j, rows.At(a, j)+p*p*s*yr[a])
				}
			}
		}
		return nil
	}
	if err := acc.Add(docs, w); err != nil {
		t.Fatal(err)
	}
	op, err := acc.Aggregated(w)
	if err != nil {
		t.Fatal(err)
	}
	got := mat.NewDense(k, l, nil)
	if err := op.Apply(context.Background(), got, theta); err != nil {
		t.Fatal(err)
	}
	rows.Scale(1/float64(acc.Docs), rows)
	got.Add(got, rows)
	want := mat.NewDense(k, l, nil)
	if err := mom.E3.Apply(context.Background(), want, theta); err != nil {
		t.Fatal(err)
	}
	// Both sum the same few thousand terms in different orders.
	if !mat.EqualApprox(got, want, 1e-10*mat.Norm(want, 1)) {
		t.Fatalf("aggregated + rows:\n%v\nexplicit:\n%v", mat.Formatted(got), mat.Formatted(want))
	}
}
