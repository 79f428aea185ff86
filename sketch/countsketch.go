package sketch

import (
	"fmt"
	"math/rand/v2"
)

// CountSketch is the linear map R^k → R^b, x ↦ Σᵢ s(i) xᵢ e_{h(i)}, with a
// bucket h(i) ∈ [0, b) and a sign s(i) = ±1 drawn independently and uniformly
// for every coordinate (a table, not a hash family, so every pair of
// coordinates collides with probability exactly 1/b and signs are fully
// independent). The same seed gives the same map.
type CountSketch struct {
	// Bucket and Sign hold h(i) and s(i) for each of the k coordinates.
	Bucket []int
	Sign   []float64
	b      int
}

// NewCountSketch draws a count sketch of R^k into R^b from seed.
func NewCountSketch(k, b int, seed uint64) *CountSketch {
	if k < 1 || b < 1 {
		panic(fmt.Sprintf("sketch: count sketch needs k ≥ 1 and b ≥ 1, got k=%d, b=%d", k, b))
	}
	r := rand.New(rand.NewPCG(seed, 0xc0c5^uint64(b)<<16))
	c := &CountSketch{Bucket: make([]int, k), Sign: make([]float64, k), b: b}
	for i := range k {
		c.Bucket[i] = r.IntN(b)
		c.Sign[i] = float64(1 - 2*int(r.Uint64()&1))
	}
	return c
}

// Dim is k, the dimension of the sketched vectors.
func (c *CountSketch) Dim() int { return len(c.Bucket) }

// Len is b, the length of a sketch.
func (c *CountSketch) Len() int { return c.b }

// Apply sets dst (length b) to the sketch of x (length k).
func (c *CountSketch) Apply(dst, x []float64) {
	clear(dst)
	c.AddTo(dst, 1, x)
}

// AddTo adds w times the sketch of x to dst.
func (c *CountSketch) AddTo(dst []float64, w float64, x []float64) {
	if len(x) != len(c.Bucket) || len(dst) != c.b {
		panic(fmt.Sprintf("sketch: CountSketch(k=%d, b=%d) given x of %d and dst of %d", len(c.Bucket), c.b, len(x), len(dst)))
	}
	for i, v := range x {
		dst[c.Bucket[i]] += w * c.Sign[i] * v
	}
}

// addPowered adds Σᵢ s(i)^p xᵢ e_{p·h(i) mod b} to dst: the sketch, under the
// bucket sum h(i)+…+h(i) of p equal indices, of the diagonal tensor Σᵢ xᵢ eᵢ^⊗p.
func (c *CountSketch) addPowered(dst []float64, p int, x []float64) {
	for i, v := range x {
		s := 1.0
		if p%2 == 1 {
			s = c.Sign[i]
		}
		dst[(p*c.Bucket[i])%c.b] += s * v
	}
}
