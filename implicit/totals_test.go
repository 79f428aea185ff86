package implicit

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFixedArray checks the exact totals offered to accumulators outside
// the package: values folded in one order and merged from two halves in
// another give the same totals bit for bit, the totals are the exact sums
// of the truncated values (compared against float64 sums within the
// rounding of 40 additions), and a total beyond the range is reported.
func TestFixedArray(t *testing.T) {
	const n, parts = 5, 40
	s := NewFixedScale(-40)
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([][]float64, parts)
	want := make([]float64, n)
	for i := range xs {
		xs[i] = make([]float64, n)
		for j := range xs[i] {
			xs[i][j] = r.NormFloat64() * math.Ldexp(1, r.IntN(20))
			want[j] += xs[i][j]
		}
	}
	// fold adds the parts in order into a fresh array.
	fold := func(order []int) FixedArray {
		a := FixedArray{Name: "x", V: make([]float64, n), Lo: make([]uint64, n), Scale: s}
		a.High()
		for _, i := range order {
			if !s.Fold(a.V, xs[i], a.Lo) {
				t.Fatal("fold left the exact range")
			}
		}
		a.Rounded()
		return a
	}
	fwd, back := make([]int, parts), make([]int, parts)
	for i := range parts {
		fwd[i], back[i] = i, parts-1-i
	}
	all := fold(fwd)
	lo, hi := fold(back[:parts/2]), fold(back[parts/2:])
	if err := hi.Merge(lo); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(all.V, hi.V) || !slices.Equal(all.Lo, hi.Lo) {
		t.Fatalf("folded in order %v %v, merged halves %v %v", all.V, all.Lo, hi.V, hi.Lo)
	}
	for j, v := range all.V {
		if math.Abs(v-want[j]) > 1e-12*math.Ldexp(1, 20)*parts {
			t.Errorf("total %d is %g, the float64 sum %g", j, v, want[j])
		}
	}
	// High and Rounded are inverses, and AddHigh adds high parts.
	c := FixedArray{V: slices.Clone(all.V), Lo: slices.Clone(all.Lo), Scale: s}
	c.High()
	d := FixedArray{V: make([]float64, n), Lo: make([]uint64, n), Scale: s}
	for j := range n {
		if !s.AddHigh(&d.V[j], &d.Lo[j], c.V[j], c.Lo[j]) {
			t.Fatal("AddHigh left the exact range")
		}
		if got := s.Round(d.V[j], d.Lo[j]); got != all.V[j] {
			t.Errorf("total %d rounds to %g, want %g", j, got, all.V[j])
		}
	}
	c.Rounded()
	if !slices.Equal(c.V, all.V) {
		t.Errorf("High then Rounded gave %v, want %v", c.V, all.V)
	}

	big := FixedArray{Name: "big", V: []float64{0}, Lo: []uint64{0}, Scale: s}
	if s.Fold(big.V, []float64{math.Ldexp(1, 80)}, big.Lo) {
		t.Error("a value of 2^80 at resolution 2^-40 was folded")
	}
	huge := FixedArray{Name: "huge", V: []float64{math.Ldexp(1, 72)}, Lo: []uint64{0}, Scale: s}
	if err := huge.Merge(huge); !errors.Is(err, ErrOverflow) {
		t.Errorf("merging 2^72 twice at resolution 2^-40: %v, want ErrOverflow", err)
	}
}
