package implicit

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"

	"gonum.org/v1/gonum/mat"
)

// basisCache remembers the fingerprint of the last matrix an accumulator was
// given, so a pass pays for hashing once, not once per batch.
type basisCache struct {
	m    mat.Matrix
	hash uint64
}

// fingerprint returns a hash of the shape and exact values of m (never 0).
// Statistics accumulated against a projection (Ω for E2·Ω, W for the whitened
// moments) carry it, so merges of statistics built on different bases are
// refused instead of silently mixing. The hash is FNV-1a of the rows, the
// columns and the values' bits in row order, 8 little-endian bytes each,
// written a row at a time (a value at a time, through At, cost a small
// fit 8% of its CPU).
func (c *basisCache) fingerprint(m mat.Matrix) uint64 {
	if c.m == m {
		return c.hash
	}
	h := fnv.New64a()
	r, cols := m.Dims()
	buf := make([]byte, 0, 8*max(cols, 2))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(cols))
	h.Write(buf)
	row := make([]float64, cols)
	for i := range r {
		matrixRow(row, m, i)
		buf = buf[:0]
		for _, v := range row {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		h.Write(buf)
	}
	c.m, c.hash = m, h.Sum64()|1
	return c.hash
}

// matrixRow sets dst to row i of m: a copy of a dense row, the nonzeros of
// a sparse one (a rowNZ method), else At column by column.
func matrixRow(dst []float64, m mat.Matrix, i int) {
	switch m := m.(type) {
	case mat.RawMatrixer:
		raw := m.RawMatrix()
		copy(dst, raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols])
	case interface {
		RowNZ(int) ([]int32, []float64)
	}:
		clear(dst)
		cs, vs := m.RowNZ(i)
		for q, c := range cs {
			dst[c] = vs[q]
		}
	default:
		for j := range dst {
			dst[j] = m.At(i, j)
		}
	}
}

// ErrBasis reports a merge of statistics taken against different projections.
var ErrBasis = errors.New("implicit: statistics were accumulated with different bases (Ω or W) and cannot be merged")

// mergeBasis combines the basis fingerprints of two statistics; an empty
// statistic (fingerprint 0) takes the other's.
func mergeBasis(dst *uint64, o uint64) error {
	switch {
	case o == 0 || *dst == o:
	case *dst == 0:
		*dst = o
	default:
		return ErrBasis
	}
	return nil
}
