package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// dense3 is a brute-force full k×k×k reference tensor.
type dense3 struct {
	k int
	a []float64
}

func (d *dense3) at(i, j, l int) float64 { return d.a[(i*d.k+j)*d.k+l] }

// randomSym returns the same random symmetric tensor as a Sym3 and as a full array.
func randomSym(k int, rng *rand.Rand) (*Sym3, *dense3) {
	t := NewSym3(k)
	d := &dense3{k: k, a: make([]float64, k*k*k)}
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				t.Set(i, j, l, rng.NormFloat64())
			}
		}
	}
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			for l := 0; l < k; l++ {
				d.a[(i*k+j)*k+l] = t.At(l, i, j)
			}
		}
	}
	return t, d
}

func randDense(r, c int, rng *rand.Rand) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

// applyOnly hides every optional method so the generic fallbacks are exercised.
type applyOnly struct{ t Tensor }

func (a applyOnly) Dim() int { return a.t.Dim() }
func (a applyOnly) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	return a.t.Apply(ctx, dst, theta)
}

func TestSym3IndexBijective(t *testing.T) {
	for _, k := range []int{1, 2, 3, 7} {
		s := NewSym3(k)
		seen := make([]bool, len(s.Data))
		for i := 0; i < k; i++ {
			for j := i; j < k; j++ {
				for l := j; l < k; l++ {
					idx := s.Index(i, j, l)
					if seen[idx] {
						t.Fatalf("k=%d: index %d reused", k, idx)
					}
					seen[idx] = true
					for _, p := range [][3]int{{i, l, j}, {j, i, l}, {j, l, i}, {l, i, j}, {l, j, i}} {
						if s.Index(p[0], p[1], p[2]) != idx {
							t.Fatalf("k=%d: permutation %v of (%d,%d,%d) maps elsewhere", k, p, i, j, l)
						}
					}
				}
			}
		}
		// Lexicographic order means the indices come out 0,1,2,... in loop order.
		n := 0
		for i := 0; i < k; i++ {
			for j := i; j < k; j++ {
				for l := j; l < k; l++ {
					if s.Index(i, j, l) != n {
						t.Fatalf("k=%d: (%d,%d,%d) at %d, want %d", k, i, j, l, s.Index(i, j, l), n)
					}
					n++
				}
			}
		}
	}
}

// Tolerance 1e-12 relative: sums of k² products of O(1) numbers in a different order.
func TestSym3ApplySliceNormBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for _, k := range []int{1, 2, 5, 13} {
		s, d := randomSym(k, rng)
		const L = 4
		theta := randDense(k, L, rng)
		got := mat.NewDense(k, L, nil)
		if err := s.Apply(ctx, got, theta); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < L; c++ {
			for i := 0; i < k; i++ {
				want := 0.0
				for j := 0; j < k; j++ {
					for l := 0; l < k; l++ {
						want += d.at(i, j, l) * theta.At(j, c) * theta.At(l, c)
					}
				}
				if math.Abs(got.At(i, c)-want) > 1e-12*(1+math.Abs(want))*float64(k) {
					t.Fatalf("k=%d Apply(%d,%d)=%v want %v", k, i, c, got.At(i, c), want)
				}
			}
		}
		w := make([]float64, k)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		sl := mat.NewSymDense(k, nil)
		if err := s.Slice(ctx, sl, w); err != nil {
			t.Fatal(err)
		}
		fb := mat.NewSymDense(k, nil)
		if err := SliceOf(ctx, applyOnly{s}, fb, w); err != nil {
			t.Fatal(err)
		}
		fro := 0.0
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				want := 0.0
				for l := 0; l < k; l++ {
					want += d.at(i, j, l) * w[l]
					fro += d.at(i, j, l) * d.at(i, j, l)
				}
				tol := 1e-12 * float64(k) * (1 + math.Abs(want))
				if math.Abs(sl.At(i, j)-want) > tol {
					t.Fatalf("k=%d Slice(%d,%d)=%v want %v", k, i, j, sl.At(i, j), want)
				}
				// Polarisation subtracts O(‖w‖²) numbers: allow 1e-10.
				if math.Abs(fb.At(i, j)-want) > 1e-10*float64(k)*(1+math.Abs(want)) {
					t.Fatalf("k=%d fallback slice (%d,%d)=%v want %v", k, i, j, fb.At(i, j), want)
				}
			}
		}
		if got := s.FrobeniusSq(); math.Abs(got-fro) > 1e-12*fro {
			t.Fatalf("k=%d FrobeniusSq %v want %v", k, got, fro)
		}
		gen, err := FrobeniusSq(ctx, applyOnly{s})
		if err != nil || math.Abs(gen-fro) > 1e-9*fro {
			t.Fatalf("k=%d generic FrobeniusSq %v want %v (%v)", k, gen, fro, err)
		}
		vals := make([]float64, L)
		if err := Cubic(ctx, s, vals, theta); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < L; c++ {
			want := 0.0
			for i := 0; i < k; i++ {
				want += theta.At(i, c) * got.At(i, c)
			}
			if math.Abs(vals[c]-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("Cubic %v want %v", vals[c], want)
			}
		}
	}
}

func TestSym3CacheInvalidation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	s, _ := randomSym(4, rng)
	theta := randDense(4, 2, rng)
	a := mat.NewDense(4, 2, nil)
	b := mat.NewDense(4, 2, nil)
	_ = s.Apply(ctx, a, theta)
	s.Scale(2)
	_ = s.Apply(ctx, b, theta)
	a.Scale(2, a)
	if !mat.EqualApprox(a, b, 1e-12) {
		t.Fatal("Apply after Scale used a stale unfolding")
	}
	o, _ := randomSym(4, rng)
	c := mat.NewDense(4, 2, nil)
	_ = o.Apply(ctx, c, theta)
	s.AddTensor(o)
	_ = s.Apply(ctx, b, theta)
	a.Add(a, c)
	if !mat.EqualApprox(a, b, 1e-12) {
		t.Fatal("Apply after AddTensor is not additive")
	}
	s.Add(1, 2, 3, 1)
	_ = s.Apply(ctx, a, theta)
	// The change is 1 at T_123 and its 5 permutations.
	want := 2 * theta.At(2, 0) * theta.At(3, 0)
	if math.Abs(a.At(1, 0)-b.At(1, 0)-want) > 1e-12 {
		t.Fatal("Apply after Add used a stale unfolding")
	}
}

func TestFromFactors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k, r := 6, 9
	v := randDense(k, r, rng)
	w := make([]float64, r)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	s := FromFactors(w, v)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			for l := 0; l < k; l++ {
				want := 0.0
				for c := 0; c < r; c++ {
					want += w[c] * v.At(i, c) * v.At(j, c) * v.At(l, c)
				}
				if math.Abs(s.At(i, j, l)-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("(%d,%d,%d)=%v want %v", i, j, l, s.At(i, j, l), want)
				}
			}
		}
	}
}
