package implicit

import (
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
// refused instead of silently mixing.
func (c *basisCache) fingerprint(m mat.Matrix) uint64 {
	if c.m == m {
		return c.hash
	}
	h := fnv.New64a()
	r, cols := m.Dims()
	var buf [8]byte
	put := func(u uint64) {
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		h.Write(buf[:])
	}
	put(uint64(r))
	put(uint64(cols))
	for i := range r {
		for j := range cols {
			put(math.Float64bits(m.At(i, j)))
		}
	}
	c.m, c.hash = m, h.Sum64()|1
	return c.hash
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
