package implicit

import (
	"context"
	"iter"
	"math"

	"github.com/streamfit/streamfit/stream"
)

// FixedScale is the resolution 2^exp of an array of exact fixed-point totals
// (see Exact) kept by an accumulator outside this package. A total is
//
//	V = H·2^(exp+63) + L·2^exp,   H an integer with |H| < 2^50, 0 ≤ L < 2^63,
//
// held as a float64 (the high part H·2^(exp+63) during a pass, round(V)
// between passes) and a low word L. Values are truncated towards zero to
// multiples of 2^exp before they are added, so the totals of the same
// values do not depend on the order or grouping of the additions.
type FixedScale struct{ s fixedScale }

// NewFixedScale returns the resolution 2^exp; totals of magnitude up to
// 2^(exp+113) are exact.
func NewFixedScale(exp int) FixedScale { return FixedScale{newFixedScale(exp)} }

// Fold adds each x[j] to the total with high part dst[j] and low word
// lo[j], in place (len(dst) and len(lo) at least len(x)). It reports false
// when a total leaves the exact range or an x[j] is not finite; the totals
// are then meaningless.
func (s FixedScale) Fold(dst, x []float64, lo []uint64) bool { return foldFixed(s.s, dst, x, lo) }

// AddHigh adds the total with high part v and low word l to the total
// (*dst, *dlo), also a high part. It reports false when the sum leaves the
// exact range.
func (s FixedScale) AddHigh(dst *float64, dlo *uint64, v float64, l uint64) bool {
	return s.s.addFixed(dst, dlo, v, l)
}

// AddUnit adds x units of the resolution (x ≥ 0) to the total with high
// part *dst and low word *lo, as AddHigh(dst, lo, 0, x) would, bit for
// bit. Counts are small against the low word, so the high part is read
// and written only when the low word carries: adding rows of counts to
// the totals of a vocabulary touches the low words alone. It reports
// false when the total leaves the exact range or x is negative.
func (s FixedScale) AddUnit(dst *float64, lo *uint64, x int64) bool {
	sum := *lo + uint64(x)
	*lo = sum & fixedLoMask
	if sum>>fixedLoBits == 0 {
		return x >= 0
	}
	*dst += s.s.hi
	return x >= 0 && math.Abs(*dst) < s.s.limit
}

// Round returns the total with high part v and low word l as the float64
// nearest it (within two roundings), a function of (v, l) alone.
func (s FixedScale) Round(v float64, l uint64) float64 { return s.s.round(v, l) }

// FixedArray is one array of exact totals of an accumulator outside this
// package: V the float64 parts, Lo the low words (as long as V), at
// resolution Scale. Between passes V holds the rounded totals, which is
// what readers of the accumulator see; High and Rounded convert V for a
// pass and back. Name identifies the array in errors.
type FixedArray struct {
	Name  string
	V     []float64
	Lo    []uint64
	Scale FixedScale
}

func (a FixedArray) array() fixedArray {
	return fixedArray{name: a.Name, v: a.V, lo: a.Lo, scale: a.Scale.s}
}

// Merge adds the rounded totals of o (of a's length and resolution) to a's
// rounded totals, exactly: merges in any order give the same totals. An
// error wraps ErrOverflow and names the array.
func (a FixedArray) Merge(o FixedArray) error {
	x := a.array()
	return x.addFrom(0, o.V, o.Lo)
}

// High turns a's rounded totals into high parts, for a pass that folds
// values into them (FixedScale.Fold, AddHigh).
func (a FixedArray) High() {
	e := Exact{arrays: []fixedArray{a.array()}}
	e.toRaw()
}

// Rounded turns a's high parts back into rounded totals (the inverse of
// High).
func (a FixedArray) Rounded() {
	e := Exact{arrays: []fixedArray{a.array()}, raw: true}
	e.toRounded()
}

// SkipBatches returns docs without its first n batches (released unread):
// the source of a pass resumed from totals that hold them. It yields an
// error if docs has fewer than n batches.
func SkipBatches(docs func(context.Context) iter.Seq2[*stream.Docs, error], n int64) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return skipBatches(docs, n)
}
