package synth

import (
	"math"
	"math/rand/v2"
)

// newRand returns the generator of stream number stream under seed.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// logGamma draws log X for X ~ Gamma(a, 1). Working in logs keeps Dirichlet draws
// with tiny shapes (α₀ = 1 over 100 topics, β = 0.1) from underflowing to zero.
func logGamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		// Gamma(a) = Gamma(a+1) · U^(1/a).
		return logGamma(r, a+1) + math.Log(1-r.Float64())/a
	}
	// Marsaglia and Tsang (2000).
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Log(d * v)
		}
	}
}

// dirichlet fills p with a draw from Dirichlet(alpha); alpha has len(p) entries
// or one entry (symmetric).
func dirichlet(r *rand.Rand, p, alpha []float64) {
	hi := math.Inf(-1)
	for i := range p {
		a := alpha[0]
		if len(alpha) > 1 {
			a = alpha[i]
		}
		p[i] = logGamma(r, a)
		hi = max(hi, p[i])
	}
	var s float64
	for i := range p {
		p[i] = math.Exp(p[i] - hi)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
}

// poisson draws from Poisson(mean): by inversion for small means, by the
// transformed rejection method PTRS (Hörmann 1993) otherwise.
func poisson(r *rand.Rand, mean float64) int {
	if mean < 10 {
		l, k, p := math.Exp(-mean), 0, 1.0
		for {
			p *= r.Float64()
			if p <= l {
				return k
			}
			k++
		}
	}
	slam := math.Sqrt(mean)
	loglam := math.Log(mean)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + mean + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -mean+k*loglam-lg {
			return int(k)
		}
	}
}

// alias is Vose's alias table for O(1) draws from a discrete distribution.
type alias struct {
	prob  []float64
	alias []int32
	small []int32 // scratch
	large []int32
}

// build prepares the table for the distribution p (which must sum to 1).
func (t *alias) build(p []float64) {
	n := len(p)
	t.prob = resize(t.prob, n)
	t.alias = resize(t.alias, n)
	t.small, t.large = t.small[:0], t.large[:0]
	for i, x := range p {
		t.prob[i] = x * float64(n)
		if t.prob[i] < 1 {
			t.small = append(t.small, int32(i))
		} else {
			t.large = append(t.large, int32(i))
		}
	}
	for len(t.small) > 0 && len(t.large) > 0 {
		s := t.small[len(t.small)-1]
		t.small = t.small[:len(t.small)-1]
		l := t.large[len(t.large)-1]
		t.alias[s] = l
		t.prob[l] -= 1 - t.prob[s]
		if t.prob[l] < 1 {
			t.large = t.large[:len(t.large)-1]
			t.small = append(t.small, l)
		}
	}
	for _, i := range t.large {
		t.prob[i], t.alias[i] = 1, i
	}
	for _, i := range t.small { // only from rounding
		t.prob[i], t.alias[i] = 1, i
	}
}

// draw returns an index distributed as the table's distribution.
func (t *alias) draw(r *rand.Rand) int32 {
	u := r.Float64() * float64(len(t.prob))
	i := int(u)
	if u-float64(i) < t.prob[i] {
		return int32(i)
	}
	return t.alias[i]
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
