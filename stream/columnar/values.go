package columnar

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// badValue reports the first value a conversion rejected: its index in the
// values array and what is wrong with it.
type badValue struct {
	at  int
	msg string
}

// firstNull is the index of a's first null, or -1. A null count without a
// validity bitmap that covers the array (a damaged file arrow-go reads)
// counts as a null at 0: scanning it would find none, and on a damaged
// length would not end.
func firstNull(a arrow.Array) int {
	if a.NullN() <= 0 {
		return -1
	}
	bm, off, n := a.NullBitmapBytes(), a.Data().Offset(), a.Len()
	if off < 0 || n < 0 || len(bm) < (off+n+7)/8 {
		return 0
	}
	for i := 0; i < n; {
		// Whole bytes of valid entries at a time.
		if j := off + i; j%8 == 0 && i+8 <= n && bm[j/8] == 0xff {
			i += 8
			continue
		}
		if bitutil.BitIsNotSet(bm, off+i) {
			return i
		}
		i++
	}
	return -1
}

// ints returns the values of a numeric array as int32, converting other types
// into scratch (whose grown form is returned second). Values outside int32 and
// floats that are not whole non-negative numbers are reported as bad; negative
// integers are kept for the caller to judge. Nulls are not looked at.
func ints(a arrow.Array, scratch []int32) ([]int32, []int32, *badValue) {
	switch v := a.(type) {
	case *array.Int32:
		return v.Int32Values(), scratch, nil
	case *array.Int64:
		return narrow(v.Int64Values(), scratch)
	case *array.Int16:
		return widen(v.Int16Values(), scratch), scratch, nil
	case *array.Int8:
		return widen(v.Int8Values(), scratch), scratch, nil
	case *array.Uint8:
		return widen(v.Uint8Values(), scratch), scratch, nil
	case *array.Uint16:
		return widen(v.Uint16Values(), scratch), scratch, nil
	case *array.Uint32:
		return narrow(v.Uint32Values(), scratch)
	case *array.Uint64:
		return narrow(v.Uint64Values(), scratch)
	case *array.Float32:
		return floats(v.Float32Values(), scratch)
	case *array.Float64:
		return floats(v.Float64Values(), scratch)
	}
	return nil, scratch, &badValue{0, fmt.Sprintf("unsupported type %s", a.DataType())}
}

func widen[T int8 | int16 | uint8 | uint16](v []T, scratch []int32) []int32 {
	out := grow(scratch, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func narrow[T int64 | uint32 | uint64](v []T, scratch []int32) ([]int32, []int32, *badValue) {
	out := grow(scratch, len(v))
	for i, x := range v {
		if x > T(math.MaxInt32) || int64(x) < math.MinInt32 {
			return nil, out, &badValue{i, fmt.Sprintf("value %d does not fit in 32 bits", x)}
		}
		out[i] = int32(x)
	}
	return out, out, nil
}

// floats accepts floating point counts that hold whole numbers.
func floats[T float32 | float64](v []T, scratch []int32) ([]int32, []int32, *badValue) {
	out := grow(scratch, len(v))
	for i, x := range v {
		f := float64(x)
		switch {
		case math.IsNaN(f):
			return nil, out, &badValue{i, "NaN count"}
		case f != math.Trunc(f):
			return nil, out, &badValue{i, fmt.Sprintf("non-integer count %g", f)}
		case f < 0:
			return nil, out, &badValue{i, fmt.Sprintf("negative count %g", f)}
		case f > math.MaxInt32:
			return nil, out, &badValue{i, fmt.Sprintf("count %g does not fit in 32 bits", f)}
		}
		out[i] = int32(f)
	}
	return out, out, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// offsets returns the n+1 offsets of a list array and its child values.
func offsets(a arrow.Array) (o32 []int32, o64 []int64, values arrow.Array) {
	switch l := a.(type) {
	case *array.List:
		return l.Offsets()[l.Offset() : l.Offset()+l.Len()+1], nil, l.ListValues()
	case *array.LargeList:
		return nil, l.Offsets()[l.Offset() : l.Offset()+l.Len()+1], l.ListValues()
	}
	return nil, nil, nil
}

// int64s returns the values of an integer array as int64.
func int64s(a arrow.Array, scratch []int64) ([]int64, []int64) {
	if v, ok := a.(*array.Int64); ok {
		return v.Int64Values(), scratch
	}
	out := grow(scratch, a.Len())
	switch v := a.(type) {
	case *array.Int32:
		for i, x := range v.Int32Values() {
			out[i] = int64(x)
		}
	case *array.Uint32:
		for i, x := range v.Uint32Values() {
			out[i] = int64(x)
		}
	case *array.Uint64:
		for i, x := range v.Uint64Values() {
			out[i] = int64(min(x, math.MaxInt64))
		}
	default:
		for i := range out {
			out[i] = int64(intAt(a, i))
		}
	}
	return out, out
}

// intAt reads one value of a small integer array (the rare types).
func intAt(a arrow.Array, i int) int64 {
	switch v := a.(type) {
	case *array.Int8:
		return int64(v.Value(i))
	case *array.Int16:
		return int64(v.Value(i))
	case *array.Uint8:
		return int64(v.Value(i))
	case *array.Uint16:
		return int64(v.Value(i))
	}
	return 0
}

func to64(o []int32, scratch []int64) []int64 {
	out := grow(scratch, len(o))
	for i, x := range o {
		out[i] = int64(x)
	}
	return out
}

// column returns the column of rec with the given name, or nil.
func column(rec arrow.RecordBatch, name string) arrow.Array {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil
	}
	return rec.Column(idx[0])
}
