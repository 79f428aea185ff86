package sketch

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The solver sees the sketch through its interface only.
var _ solver.Tensor = (*TensorSketch)(nil)

// tsTerms is a symmetric tensor given as Σ w_r x_r⊗x_r⊗x_r.
type tsTerms struct {
	k int
	w []float64
	x [][]float64
}

func randomTerms(k, n int, seed uint64) *tsTerms {
	r := rand.New(rand.NewPCG(seed, 9))
	t := &tsTerms{k: k}
	for range n {
		x := make([]float64, k)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		t.x = append(t.x, x)
		t.w = append(t.w, r.NormFloat64())
	}
	return t
}

func (t *tsTerms) dense() []float64 {
	k := t.k
	d := make([]float64, k*k*k)
	for r, x := range t.x {
		for a := range k {
			for b := range k {
				for c := range k {
					d[(a*k+b)*k+c] += t.w[r] * x[a] * x[b] * x[c]
				}
			}
		}
	}
	return d
}

func (t *tsTerms) sketch(b, count int, seed uint64) *TensorSketch {
	s := NewTensorSketch(t.k, b, count, seed)
	for r, x := range t.x {
		s.AddCube(t.w[r], x)
	}
	return s
}

// contract returns T(I,u,u) of a dense k×k×k tensor.
func contract(d []float64, k int, u []float64) []float64 {
	out := make([]float64, k)
	for a := range k {
		for b := range k {
			for c := range k {
				out[a] += d[(a*k+b)*k+c] * u[b] * u[c]
			}
		}
	}
	return out
}

// multiplicity is the number of distinct orderings of the index multiset {a,b,c}.
func multiplicity(a, b, c int) float64 {
	switch {
	case a == b && b == c:
		return 1
	case a == b || b == c || a == c:
		return 3
	}
	return 6
}

// bruteSketch is S(X)[t] = Σ s(a)s(b)s(c) X_abc [h(a)+h(b)+h(c) ≡ t] by definition.
func bruteSketch(cs *CountSketch, x []float64, k int) []float64 {
	b := cs.Len()
	out := make([]float64, b)
	for a := range k {
		for bb := range k {
			for c := range k {
				t := (cs.Bucket[a] + cs.Bucket[bb] + cs.Bucket[c]) % b
				out[t] += cs.Sign[a] * cs.Sign[bb] * cs.Sign[c] * x[(a*k+bb)*k+c]
			}
		}
	}
	return out
}

// TestTensorSketchMatchesDefinition checks the FFT accumulation against S(T)
// formed entry by entry, and Apply against ⟨S(T), S(X'ᵢ)⟩ with the weighted
// query X'ᵢ = sym(eᵢ⊗u⊗u)/multiplicity formed entry by entry.
func TestTensorSketchMatchesDefinition(t *testing.T) {
	const k, b = 5, 16
	terms := randomTerms(k, 4, 1)
	ts := terms.sketch(b, 2, 7)
	ts.AddSym3Outer(0.7, []float64{1, -2, 0.5, 0, 3}, []float64{0.3, 0.1, -1, 2, 0}, -0.9)
	m := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			m.SetSym(i, j, float64(i+2*j)-3)
		}
	}
	v := []float64{0.2, -1, 1.5, 0.4, -0.3}
	ts.AddSym3(-0.4, v, m, 1.3)
	dense := terms.dense()
	// Add the same Sym₃ terms densely.
	x1, v1 := []float64{0.3, 0.1, -1, 2, 0}, []float64{1, -2, 0.5, 0, 3}
	for a := range k {
		for bb := range k {
			for c := range k {
				i := (a*k+bb)*k + c
				dense[i] += 0.7*(v1[a]*x1[bb]*x1[c]+x1[a]*v1[bb]*x1[c]+x1[a]*x1[bb]*v1[c]) - 0.9*x1[a]*x1[bb]*x1[c]
				dense[i] += -0.4*(v[a]*m.At(bb, c)+v[bb]*m.At(a, c)+v[c]*m.At(a, bb)) + 1.3*v[a]*v[bb]*v[c]
			}
		}
	}
	u := []float64{0.5, -0.2, 0.9, 0.1, -0.6}
	theta := mat.NewDense(k, 1, append([]float64(nil), u...))
	got := mat.NewDense(k, 1, nil)
	if err := ts.Apply(context.Background(), got, theta); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, k)
	for r, cs := range ts.cs {
		st := bruteSketch(cs, dense, k)
		fst := ts.scratch().fft.Coefficients(nil, st)
		for f := range fst {
			if d := fst[f] - ts.spec[r][f]; math.Hypot(real(d), imag(d)) > 1e-9 {
				t.Fatalf("sketch %d coefficient %d: FFT accumulation %v, definition %v", r, f, ts.spec[r][f], fst[f])
			}
		}
		for i := range k {
			q := make([]float64, k*k*k)
			for a := range k {
				for bb := range k {
					for c := range k {
						// sym(eᵢ⊗u⊗u) entry, divided by the multiplicity.
						s := 0.0
						if a == i {
							s += u[bb] * u[c]
						}
						if bb == i {
							s += u[a] * u[c]
						}
						if c == i {
							s += u[a] * u[bb]
						}
						q[(a*k+bb)*k+c] = s / 3 / multiplicity(a, bb, c)
					}
				}
			}
			want[i] += floats.Dot(st, bruteSketch(cs, q, k)) / float64(len(ts.cs))
		}
	}
	for i := range k {
		if math.Abs(got.At(i, 0)-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Errorf("coordinate %d: Apply %.12g, brute force over the sketch %.12g", i, got.At(i, 0), want[i])
		}
	}
	// T̂(u,u,u) = uᵀ T̂(I,u,u) is the weighted inner product with u⊗3.
	cube := make([]float64, k*k*k)
	for a := range k {
		for bb := range k {
			for c := range k {
				cube[(a*k+bb)*k+c] = u[a] * u[bb] * u[c] / multiplicity(a, bb, c)
			}
		}
	}
	wantV := 0.0
	for _, cs := range ts.cs {
		wantV += floats.Dot(bruteSketch(cs, dense, k), bruteSketch(cs, cube, k)) / float64(len(ts.cs))
	}
	if gotV := floats.Dot(u, mat.Col(nil, 0, got)); math.Abs(gotV-wantV) > 1e-9*(1+math.Abs(wantV)) {
		t.Errorf("T̂(u,u,u) = %.12g, brute force %.12g", gotV, wantV)
	}
	// Without the weights the inner product counts distinct entries six times.
	if in, brute := ts.inner(u, u, u), func() float64 {
		s := 0.0
		for _, cs := range ts.cs {
			uu := make([]float64, k*k*k)
			for a := range k {
				for bb := range k {
					for c := range k {
						uu[(a*k+bb)*k+c] = u[a] * u[bb] * u[c]
					}
				}
			}
			s += floats.Dot(bruteSketch(cs, dense, k), bruteSketch(cs, uu, k)) / float64(len(ts.cs))
		}
		return s
	}(); math.Abs(in-brute) > 1e-9*(1+math.Abs(brute)) {
		t.Errorf("inner %.12g, brute force %.12g", in, brute)
	}
}

// sketchErrors returns the mean over seeds of the estimates of T(I,u,u) and
// their RMS error against the exact contraction.
func sketchErrors(terms *tsTerms, u []float64, b, count, seeds int) (mean []float64, rms float64) {
	k := terms.k
	exact := contract(terms.dense(), k, u)
	mean = make([]float64, k)
	theta := mat.NewDense(k, 1, u)
	got := mat.NewDense(k, 1, nil)
	for s := range seeds {
		ts := terms.sketch(b, count, uint64(1000+s))
		if err := ts.Apply(context.Background(), got, theta); err != nil {
			panic(err)
		}
		for i := range k {
			e := got.At(i, 0)
			mean[i] += e / float64(seeds)
			rms += (e - exact[i]) * (e - exact[i])
		}
	}
	return mean, math.Sqrt(rms / float64(seeds*k))
}

func frob(d []float64) float64 { return floats.Norm(d, 2) }

// TestTensorSketchUnbiased averages the estimate over many independent
// sketches: the mean must approach T(I,u,u) within its standard error plus
// the O(‖T‖_F‖u‖²/b) collision term, while one sketch is far off.
func TestTensorSketchUnbiased(t *testing.T) {
	const k, seeds = 6, 1500
	terms := randomTerms(k, 5, 3)
	u := []float64{0.4, -0.3, 0.5, 0.2, -0.6, 0.3}
	exact := contract(terms.dense(), k, u)
	nt, uu := frob(terms.dense()), floats.Dot(u, u)
	for _, b := range []int{64, 256} {
		mean, rms := sketchErrors(terms, u, b, 1, seeds)
		se := rms / math.Sqrt(seeds)
		for i := range k {
			if d := math.Abs(mean[i] - exact[i]); d > 5*se+2*nt*uu/float64(b) {
				t.Errorf("b=%d coordinate %d: mean of %d sketches %.4f, exact %.4f (|diff| %.4f, standard error %.4f)", b, i, seeds, mean[i], exact[i], d, se)
			}
		}
		// One sketch has a real error: the test above is not vacuous.
		if rms < 10*se {
			t.Errorf("b=%d: single-sketch RMS error %.4g is not larger than the standard error %.4g", b, rms, se)
		}
	}
}

// TestTensorSketchErrorShrinks checks that the RMS error of T̂(I,u,u) falls
// like ‖T‖_F‖u‖²/√(b·count).
func TestTensorSketchErrorShrinks(t *testing.T) {
	const k = 8
	terms := randomTerms(k, 6, 5)
	r := rand.New(rand.NewPCG(4, 4))
	u := make([]float64, k)
	for i := range u {
		u[i] = r.NormFloat64()
	}
	floats.Scale(1/floats.Norm(u, 2), u)
	scale := frob(terms.dense())
	prev := math.Inf(1)
	for _, c := range []struct{ b, count int }{{64, 1}, {256, 1}, {1024, 1}, {4096, 1}, {1024, 4}} {
		_, rms := sketchErrors(terms, u, c.b, c.count, 40)
		rel := rms * math.Sqrt(float64(c.b*c.count)) / scale
		t.Logf("b=%5d count=%d: RMS error %.4g, ×√(b·count)/‖T‖_F = %.3f", c.b, c.count, rms, rel)
		if rel < 0.05 || rel > 2 {
			t.Errorf("b=%d count=%d: error %.4g is not about ‖T‖_F/√(b·count) = %.4g", c.b, c.count, rms, scale/math.Sqrt(float64(c.b*c.count)))
		}
		if c.count == 1 {
			if rms > prev/1.5 {
				t.Errorf("b=%d: error %.4g did not shrink from %.4g at b/4", c.b, rms, prev)
			}
			prev = rms
		}
	}
}

// orthoTensor returns Σ λᵢ vᵢ⊗3 for a random orthonormal basis (columns of v).
func orthoTensor(k int, seed uint64) (*tsTerms, *mat.Dense, []float64) {
	// The eigenvectors of a random symmetric matrix are a random orthonormal basis.
	r := rand.New(rand.NewPCG(seed, 11))
	g := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			g.SetSym(i, j, r.NormFloat64())
		}
	}
	var es mat.EigenSym
	es.Factorize(g, true)
	var q mat.Dense
	es.VectorsTo(&q)
	terms := &tsTerms{k: k}
	lam := make([]float64, k)
	for i := range k {
		lam[i] = 1 + float64(i)/float64(k)
		terms.x = append(terms.x, mat.Col(nil, i, &q))
		terms.w = append(terms.w, lam[i])
	}
	return terms, &q, lam
}

// TestTensorSketchRTPM recovers an orthogonal tensor's components from its
// sketch with the robust tensor power method. Thm 5.1 of [004] bounds the
// error by 8ε/λ_min for a perturbation of operator norm ε; the sketch's is
// about ‖T‖_F/√(b·count), so the bound 8‖T‖_F/(λ_min√(b·count)) tightens
// with b, and the measured error must stay below it and shrink.
func TestTensorSketchRTPM(t *testing.T) {
	const k, count = 10, 2
	terms, v, lam := orthoTensor(k, 2)
	nt := frob(terms.dense())
	var errs []float64
	bs := []int{1 << 8, 1 << 10, 1 << 12}
	for _, b := range bs {
		ts := terms.sketch(b, count, 77)
		res, err := solver.RTPM(context.Background(), ts, k, solver.Options{Seed: 1, Restarts: 15})
		if err != nil && !errors.Is(err, solver.ErrNonPositive) {
			t.Fatal(err)
		}
		_, dist := solver.MatchColumns(v, res.Factors)
		worst := 0.0
		for _, d := range dist {
			if math.IsNaN(d) {
				d = 2
			}
			worst = math.Max(worst, d)
		}
		bound := 8 * nt / (lam[0] * math.Sqrt(float64(b*count)))
		t.Logf("b=%6d: worst component error %.4f, bound %.4f", b, worst, bound)
		if worst > bound {
			t.Errorf("b=%d: component error %.4f above the bound %.4f", b, worst, bound)
		}
		errs = append(errs, worst)
	}
	if errs[2] > errs[0]/2 {
		t.Errorf("error at b=%d (%.4f) is not well below b=%d (%.4f)", bs[2], errs[2], bs[0], errs[0])
	}
}

func TestTensorSketchMergeAndMedian(t *testing.T) {
	terms := randomTerms(4, 6, 8)
	whole := terms.sketch(64, 3, 5)
	a := NewTensorSketch(4, 64, 3, 5)
	bb := a.Empty()
	for r, x := range terms.x {
		if r%2 == 0 {
			a.AddCube(terms.w[r], x)
		} else {
			bb.AddCube(terms.w[r], x)
		}
	}
	if err := a.Merge(bb); err != nil {
		t.Fatal(err)
	}
	theta := mat.NewDense(4, 2, []float64{1, 0.2, -0.5, 0.3, 0.1, 0.9, 0.7, -0.4})
	g1, g2 := mat.NewDense(4, 2, nil), mat.NewDense(4, 2, nil)
	if err := whole.Apply(context.Background(), g1, theta); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(context.Background(), g2, theta); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(g1, g2, 1e-10) {
		t.Errorf("merged halves differ from one sketch:\n%v\n%v", mat.Formatted(g1), mat.Formatted(g2))
	}
	if err := a.Merge(NewTensorSketch(4, 64, 3, 6)); !errors.Is(err, ErrSketchMismatch) {
		t.Errorf("merging sketches of different seeds: err = %v, want ErrSketchMismatch", err)
	}
	// The median of three sketches is the middle single-sketch estimate.
	whole.Median = true
	if err := whole.Apply(context.Background(), g1, theta); err != nil {
		t.Fatal(err)
	}
	var single [3]*mat.Dense
	for r := range 3 {
		one := &TensorSketch{k: 4, b: 64, count: 1, cs: whole.cs[r : r+1], spec: whole.spec[r : r+1]}
		single[r] = mat.NewDense(4, 2, nil)
		if err := one.Apply(context.Background(), single[r], theta); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		for j := range 2 {
			x := []float64{single[0].At(i, j), single[1].At(i, j), single[2].At(i, j)}
			slices.Sort(x)
			if math.Abs(g1.At(i, j)-x[1]) > 1e-12 {
				t.Errorf("median at (%d,%d) = %g, single estimates %v", i, j, g1.At(i, j), x)
			}
		}
	}
	// Scale is linear.
	whole.Median = false
	if err := whole.Apply(context.Background(), g1, theta); err != nil {
		t.Fatal(err)
	}
	whole.Scale(-2)
	if err := whole.Apply(context.Background(), g2, theta); err != nil {
		t.Fatal(err)
	}
	g1.Scale(-2, g1)
	if !mat.EqualApprox(g1, g2, 1e-10) {
		t.Error("Scale(-2) did not scale the estimates by -2")
	}
}

func TestCountSketchSeeded(t *testing.T) {
	a, b := NewCountSketch(10, 7, 3), NewCountSketch(10, 7, 3)
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	da, db := make([]float64, 7), make([]float64, 7)
	a.Apply(da, x)
	b.Apply(db, x)
	if !floats.Equal(da, db) {
		t.Error("same seed gave different sketches")
	}
	// A count sketch preserves sums of signed entries: Σ_t CS(x)[t] = Σ s(i)xᵢ.
	want := 0.0
	for i, v := range x {
		want += a.Sign[i] * v
	}
	if got := floats.Sum(da); math.Abs(got-want) > 1e-12 {
		t.Errorf("Σ CS(x) = %g, want %g", got, want)
	}
}

func TestTensorSketchBinaryRoundTrip(t *testing.T) {
	ts := randomTerms(5, 3, 2).sketch(32, 2, 9)
	ts.Median = true
	data, err := ts.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back TensorSketch
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	theta := mat.NewDense(5, 2, []float64{1, 0, 0.5, 1, -1, 0.2, 0.3, 0.3, 0, -0.7})
	a, b := mat.NewDense(5, 2, nil), mat.NewDense(5, 2, nil)
	if err := ts.Apply(context.Background(), a, theta); err != nil {
		t.Fatal(err)
	}
	if err := back.Apply(context.Background(), b, theta); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, b) || !back.Median {
		t.Error("decoded sketch differs from the original")
	}
	if err := back.Merge(ts); err != nil {
		t.Errorf("decoded sketch does not merge with its original: %v", err)
	}
	for _, bad := range [][]byte{nil, data[:len(data)-1], append([]byte("XXXX"), data[4:]...)} {
		if err := back.UnmarshalBinary(bad); !errors.Is(err, ErrSketchFormat) {
			t.Errorf("UnmarshalBinary(%d bytes) = %v, want ErrSketchFormat", len(bad), err)
		}
	}
}
