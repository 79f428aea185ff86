package solver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randDenseN returns an order-p tensor with Gaussian entries as its flat
// array and dimensions.
func randDenseN(dims []int, rng *rand.Rand) []float64 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// bruteContract is the definition: column c of the result is
// Σ_{idx} T[idx] Π_{m≠mode} xs[m][idx_m, c] placed at idx_mode.
func bruteContract(data []float64, dims []int, mode int, xs []*mat.Dense, L int) *mat.Dense {
	out := mat.NewDense(dims[mode], L, nil)
	idx := make([]int, len(dims))
	for flat, v := range data {
		rem := flat
		for m := len(dims) - 1; m >= 0; m-- {
			idx[m] = rem % dims[m]
			rem /= dims[m]
		}
		for c := 0; c < L; c++ {
			p := v
			for m, x := range xs {
				if m != mode {
					p *= x.At(idx[m], c)
				}
			}
			out.Set(idx[mode], c, out.At(idx[mode], c)+p)
		}
	}
	return out
}

func TestDenseContractBruteForce(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(50, 51))
	L := 3
	for _, dims := range [][]int{{4, 5, 3}, {3, 4, 2, 5}} {
		data := randDenseN(dims, rng)
		xs := make([]*mat.Dense, len(dims))
		for m, d := range dims {
			xs[m] = randDense(d, L, rng)
		}
		for mode := range dims {
			got := mat.NewDense(dims[mode], L, nil)
			var err error
			if len(dims) == 3 {
				d3 := &Dense3{D1: dims[0], D2: dims[1], D3: dims[2], Data: data}
				o := others(xs, mode, 2)
				err = d3.Contract(ctx, mode, got, o[0], o[1])
			} else {
				d4 := &Dense4{D1: dims[0], D2: dims[1], D3: dims[2], D4: dims[3], Data: data}
				o := others(xs, mode, 3)
				err = d4.Contract(ctx, mode, got, o[0], o[1], o[2])
			}
			if err != nil {
				t.Fatal(err)
			}
			want := bruteContract(data, dims, mode, xs, L)
			if !mat.EqualApprox(got, want, 1e-12) {
				t.Fatalf("dims %v mode %d:\n%v\nwant\n%v", dims, mode, mat.Formatted(got), mat.Formatted(want))
			}
		}
	}
}

func TestDenseFromCP(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 53))
	w := []float64{2, -1.5}
	a, b, c, e := randDense(3, 2, rng), randDense(4, 2, rng), randDense(2, 2, rng), randDense(3, 2, rng)
	t3 := Dense3FromCP(w, a, b, c)
	t4 := Dense4FromCP(w, a, b, c, e)
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			for l := 0; l < 2; l++ {
				want := 0.0
				for q := range w {
					want += w[q] * a.At(i, q) * b.At(j, q) * c.At(l, q)
				}
				if math.Abs(t3.At(i, j, l)-want) > 1e-12 {
					t.Fatalf("Dense3FromCP (%d,%d,%d) = %v want %v", i, j, l, t3.At(i, j, l), want)
				}
				for m := 0; m < 3; m++ {
					want4 := 0.0
					for q := range w {
						want4 += w[q] * a.At(i, q) * b.At(j, q) * c.At(l, q) * e.At(m, q)
					}
					if math.Abs(t4.At(i, j, l, m)-want4) > 1e-12 {
						t.Fatalf("Dense4FromCP (%d,%d,%d,%d)", i, j, l, m)
					}
				}
			}
		}
	}
	if math.Abs(t3.FrobeniusSq()-sumSq(t3.Data)) != 0 {
		t.Fatal("FrobeniusSq")
	}
}

// samplesTensor returns the explicit moment (1/n)Σ x1⊗x2⊗x3 of the rows.
func samplesTensor(x1, x2, x3 *mat.Dense) *Dense3 {
	n, d1 := x1.Dims()
	_, d2 := x2.Dims()
	_, d3 := x3.Dims()
	t := NewDense3(d1, d2, d3)
	for l := 0; l < n; l++ {
		for i := 0; i < d1; i++ {
			for j := 0; j < d2; j++ {
				p := x1.At(l, i) * x2.At(l, j) / float64(n)
				for q := 0; q < d3; q++ {
					t.Data[(i*d2+j)*d3+q] += p * x3.At(l, q)
				}
			}
		}
	}
	return t
}

// The Hadamard form of [002] eq. (23) equals contracting the explicit
// empirical moment, in every mode, third and fourth order.
func TestSampleTensorMatchesDense(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(54, 55))
	n, L := 37, 4
	x1, x2, x3, x4 := randDense(n, 5, rng), randDense(n, 4, rng), randDense(n, 3, rng), randDense(n, 2, rng)
	st := SampleTensor{DenseViews{X1: x1, X2: x2, X3: x3, Batch: 10}}
	dt := samplesTensor(x1, x2, x3)
	dims := []int{5, 4, 3}
	xs := []*mat.Dense{randDense(5, L, rng), randDense(4, L, rng), randDense(3, L, rng)}
	for mode := 0; mode < 3; mode++ {
		o := others(xs, mode, 2)
		got, want := mat.NewDense(dims[mode], L, nil), mat.NewDense(dims[mode], L, nil)
		if err := st.Contract(ctx, mode, got, o[0], o[1]); err != nil {
			t.Fatal(err)
		}
		if err := dt.Contract(ctx, mode, want, o[0], o[1]); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(got, want, 1e-12) {
			t.Fatalf("third order, mode %d differs", mode)
		}
	}
	// Fourth order against the brute-force definition of the moment.
	all := mat.NewDense(n, 14, nil)
	for l := 0; l < n; l++ {
		row := append(append(append(mat.Row(nil, l, x1), mat.Row(nil, l, x2)...), mat.Row(nil, l, x3)...), mat.Row(nil, l, x4)...)
		all.SetRow(l, row)
	}
	st4 := SampleTensor4{RowViews4{D1: 5, D2: 4, D3: 3, D4: 2, Pass: MemoryPass(all, 8)}}
	dims4 := []int{5, 4, 3, 2}
	data := make([]float64, 5*4*3*2)
	for l := 0; l < n; l++ {
		for i := 0; i < 5; i++ {
			for j := 0; j < 4; j++ {
				for q := 0; q < 3; q++ {
					for m := 0; m < 2; m++ {
						data[((i*4+j)*3+q)*2+m] += x1.At(l, i) * x2.At(l, j) * x3.At(l, q) * x4.At(l, m) / float64(n)
					}
				}
			}
		}
	}
	xs4 := append(xs, randDense(2, L, rng))
	for mode := 0; mode < 4; mode++ {
		o := others(xs4, mode, 3)
		got := mat.NewDense(dims4[mode], L, nil)
		if err := st4.Contract(ctx, mode, got, o[0], o[1], o[2]); err != nil {
			t.Fatal(err)
		}
		if want := bruteContract(data, dims4, mode, xs4, L); !mat.EqualApprox(got, want, 1e-12) {
			t.Fatalf("fourth order, mode %d differs", mode)
		}
	}
	// Bad input: views whose batches disagree in rows, and a source with no rows.
	bad := ViewsFunc{D1: 5, D2: 4, D3: 3, Pass: func(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error {
		return fn(randDense(3, 5, rng), randDense(2, 4, rng), randDense(3, 3, rng))
	}}
	if err := (SampleTensor{bad}).Contract(ctx, 0, mat.NewDense(5, L, nil), xs[1], xs[2]); err == nil {
		t.Fatal("mismatched batch rows accepted")
	}
	empty := RowViews{D1: 5, D2: 4, D3: 3, Pass: MemoryPass(mat.NewDense(1, 12, nil).Slice(0, 0, 0, 12).(*mat.Dense), 4)}
	if err := (SampleTensor{empty}).Contract(ctx, 0, mat.NewDense(5, L, nil), xs[1], xs[2]); err == nil {
		t.Fatal("empty views accepted")
	}
}
