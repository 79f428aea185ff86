package implicit

import (
	"errors"
	"math"
	"math/big"
	"math/bits"

	"github.com/streamfit/streamfit/implicit/statsfile"
)

// Wide exact totals.
//
// The totals of the dense models' passes (sums of x, x xᵀ, whitened cubes
// and fourth powers, cross moments of views or of consecutive rows) have no
// bound known before the pass, unlike LDA's, whose documents' contributions
// the projection bounds. A wide total is a signed 192-bit integer count of
// 2^-wideFrac: each batch partial is truncated towards zero to a multiple of
// 2^-wideFrac (a function of the partial alone) and added as an integer, so
// any grouping of the same partials gives the same total, bit for bit. The
// resolution 2^-96 ≈ 1.3e-29 is far below the float64 rounding of any
// partial of sample data; a partial must stay below 2^84 ≈ 1.9e25 in
// magnitude and a total below 2^94, else the pass reports ErrWideRange.
const (
	wideFrac  = 96  // fractional bits
	wideLimbs = 3   // 64-bit limbs per total
	widePart  = 180 // bits of the largest partial (below the sign and headroom)
)

// ErrWideRange reports a partial sum or a total beyond the range of the
// exact wide totals, or one that is not finite.
var ErrWideRange = errors.New("implicit: a sum left the exact range of the statistics (|partial| ≥ 2^84, |total| ≥ 2^94, or not finite)")

// wideAdd adds x, truncated to a multiple of 2^-wideFrac, to the total t (3
// limbs, little endian, two's complement). It reports false when x is not
// finite or too large, or the total leaves its range.
func wideAdd(t []uint64, x float64) bool {
	if x == 0 {
		return true
	}
	b := math.Float64bits(x)
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0x7ff {
		return false
	}
	if exp == 0 {
		exp = 1
	} else {
		mant |= 1 << 52
	}
	shift := exp - 1075 + wideFrac
	if shift < 0 {
		if shift <= -53 {
			return true
		}
		mant >>= uint(-shift)
		shift = 0
	}
	if shift+53 > widePart {
		return false
	}
	var v [wideLimbs]uint64
	q, r := shift/64, uint(shift%64)
	v[q] = mant << r
	if r > 0 && q+1 < wideLimbs {
		v[q+1] = mant >> (64 - r)
	}
	var c uint64
	if b>>63 == 0 {
		t[0], c = bits.Add64(t[0], v[0], 0)
		t[1], c = bits.Add64(t[1], v[1], c)
		t[2], _ = bits.Add64(t[2], v[2], c)
	} else {
		t[0], c = bits.Sub64(t[0], v[0], 0)
		t[1], c = bits.Sub64(t[1], v[1], c)
		t[2], _ = bits.Sub64(t[2], v[2], c)
	}
	return wideInRange(t)
}

// wideInRange reports whether the total t is below 2^190 in magnitude (its
// top two bits equal its sign), so that one more partial cannot wrap it.
func wideInRange(t []uint64) bool {
	top := t[wideLimbs-1] >> 62
	return top == 0 || top == 3
}

// wideMerge adds the total o to t.
func wideMerge(t, o []uint64) bool {
	var c uint64
	t[0], c = bits.Add64(t[0], o[0], 0)
	t[1], c = bits.Add64(t[1], o[1], c)
	t[2], _ = bits.Add64(t[2], o[2], c)
	return wideInRange(t)
}

// wideFloat returns the float64 nearest the total t.
func wideFloat(t []uint64) float64 {
	neg := t[wideLimbs-1]>>63 != 0
	var a [wideLimbs]uint64
	copy(a[:], t)
	if neg {
		var c uint64 = 1
		for i := range a {
			a[i], c = bits.Add64(^a[i], 0, c)
		}
	}
	if a[2] == 0 && a[1] == 0 && a[0] < 1<<53 {
		v := math.Ldexp(float64(a[0]), -wideFrac)
		if neg {
			v = -v
		}
		return v
	}
	words := make([]big.Word, 0, 2*wideLimbs)
	for _, l := range a {
		if bits.UintSize == 64 {
			words = append(words, big.Word(l))
		} else {
			words = append(words, big.Word(l), big.Word(l>>32))
		}
	}
	var f big.Float
	f.SetInt(new(big.Int).SetBits(words))
	f.SetMantExp(&f, -wideFrac)
	v, _ := f.Float64()
	if neg {
		v = -v
	}
	return v
}

// WideSums is an array of exact wide totals (see above): the sums of one
// named statistic of a dense pass.
type WideSums struct {
	// Name names the statistic in files and errors.
	Name string
	// t holds wideLimbs limbs per total.
	t []uint64
}

// NewWideSums returns n zero totals named name.
func NewWideSums(name string, n int) *WideSums {
	return &WideSums{Name: name, t: make([]uint64, wideLimbs*n)}
}

// Len is the number of totals.
func (s *WideSums) Len() int { return len(s.t) / wideLimbs }

// Add adds the partial sums x (one per total) exactly.
func (s *WideSums) Add(x []float64) error {
	if len(x) != s.Len() {
		return errors.New("implicit: " + s.Name + ": partial of the wrong length")
	}
	ok := true
	for i, v := range x {
		ok = wideAdd(s.t[wideLimbs*i:wideLimbs*i+wideLimbs], v) && ok
	}
	if !ok {
		return ErrWideRange
	}
	return nil
}

// Merge adds the totals o (of the same length).
func (s *WideSums) Merge(o *WideSums) error {
	if o.Len() != s.Len() || o.Name != s.Name {
		return &statsfile.IncompatibleError{Field: "sums", A: s.Name, B: o.Name}
	}
	ok := true
	for i := 0; i < len(s.t); i += wideLimbs {
		ok = wideMerge(s.t[i:i+wideLimbs], o.t[i:i+wideLimbs]) && ok
	}
	if !ok {
		return ErrWideRange
	}
	return nil
}

// Floats returns the totals rounded to float64.
func (s *WideSums) Floats() []float64 {
	out := make([]float64, s.Len())
	for i := range out {
		out[i] = wideFloat(s.t[wideLimbs*i : wideLimbs*i+wideLimbs])
	}
	return out
}
