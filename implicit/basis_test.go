package implicit

import (
	"hash/fnv"
	"math"
	"testing"

	"github.com/streamfit/streamfit/sketch"
	"gonum.org/v1/gonum/mat"
)

// TestFingerprintBytes: the fingerprint is FNV-1a of the shape and of
// every value's bits in row order, whatever the matrix type (a dense
// matrix, a view into one, a sparse sign matrix, its transpose through
// At), so statistics files keep the fingerprints they had.
func TestFingerprintBytes(t *testing.T) {
	byValue := func(m mat.Matrix) uint64 {
		h := fnv.New64a()
		r, c := m.Dims()
		put := func(u uint64) {
			var b [8]byte
			for i := range b {
				b[i] = byte(u >> (8 * i))
			}
			h.Write(b[:])
		}
		put(uint64(r))
		put(uint64(c))
		for i := range r {
			for j := range c {
				put(math.Float64bits(m.At(i, j)))
			}
		}
		return h.Sum64() | 1
	}
	dense := randDense(50, 7, 1)
	sp := sketch.SparseSign(60, 9, sketch.DefaultSparsity, 2)
	for name, m := range map[string]mat.Matrix{
		"dense":     dense,
		"view":      dense.Slice(3, 40, 1, 6),
		"sparse":    sp,
		"transpose": sp.T(),
	} {
		var c basisCache
		if got, want := c.fingerprint(m), byValue(m); got != want {
			t.Errorf("%s: fingerprint %x, want %x", name, got, want)
		}
	}
	var c basisCache
	other := mat.DenseCopyOf(dense)
	other.Set(4, 2, math.Nextafter(other.At(4, 2), 1))
	if c.fingerprint(dense) == (&basisCache{}).fingerprint(other) {
		t.Error("matrices one ulp apart share a fingerprint")
	}
}
