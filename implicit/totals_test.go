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

// TestAddUnit checks AddUnit against AddHigh of the same counts, bit for
// bit, with low words near the carry and counts that are often zero, and
// that a negative count or a total beyond the range is reported.
func TestAddUnit(t *testing.T) {
	const n = 64
	s := NewFixedScale(-30)
	r := rand.New(rand.NewPCG(3, 4))
	v1, v2 := make([]float64, n), make([]float64, n)
	lo1, lo2 := make([]uint64, n), make([]uint64, n)
	for j := range n {
		v1[j] = float64(r.IntN(5)) * math.Ldexp(1, -30+63)
		v2[j] = v1[j]
		lo1[j] = fixedLoMask - uint64(r.IntN(1<<20))
		lo2[j] = lo1[j]
	}
	carries := 0
	for range 50 {
		x := make([]int64, n)
		for j := range x {
			if r.IntN(3) > 0 {
				x[j] = r.Int64N(1 << 18)
			}
		}
		for j := range x {
			before := v1[j]
			if !s.AddHigh(&v1[j], &lo1[j], 0, uint64(x[j])) {
				t.Fatal("AddHigh left the range")
			}
			if v1[j] != before {
				carries++
			}
		}
		for j := range x {
			if !s.AddUnit(&v2[j], &lo2[j], x[j]) {
				t.Fatal("AddUnit left the range")
			}
		}
	}
	if carries == 0 {
		t.Fatal("no low word carried: the test does not reach the high parts")
	}
	if !slices.Equal(v1, v2) || !slices.Equal(lo1, lo2) {
		t.Fatal("AddUnit differs from AddHigh")
	}
	if s.AddUnit(&v2[0], &lo2[0], -1) {
		t.Error("a negative count was not reported")
	}
	big, blo := math.Ldexp(1, -30+63+fixedHiBits)-math.Ldexp(1, -30+63), uint64(fixedLoMask)
	if s.AddUnit(&big, &blo, 1) {
		t.Error("a total beyond the range was not reported")
	}
}
