package implicit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// tinyCorpus draws n documents of 1..7 tokens over d terms (so some are
// skipped), returning the batch and each document's token list.
func tinyCorpus(n, d int, seed uint64) (*stream.Docs, [][]int) {
	r := rand.New(rand.NewPCG(seed, 2))
	b := &stream.Docs{Offsets: []int{0}}
	var toks [][]int
	for range n {
		l := 1 + r.IntN(7)
		tk := make([]int, l)
		count := map[int]int32{}
		for i := range tk {
			tk[i] = r.IntN(d)
			count[tk[i]]++
		}
		terms := make([]int, 0, len(count))
		for t := range count {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		for _, t := range terms {
			b.Add(int32(t), count[t])
		}
		b.EndDoc()
		toks = append(toks, tk)
	}
	return b, toks
}

// bruteMoments averages eq. (8)/(9) by enumerating ordered distinct position
// pairs and triples of every document with at least 3 tokens.
func bruteMoments(toks [][]int, d int) (m1 []float64, e2 []float64, e3 []float64, n int) {
	m1 = make([]float64, d)
	e2 = make([]float64, d*d)
	e3 = make([]float64, d*d*d)
	for _, tk := range toks {
		l := len(tk)
		if l < 3 {
			continue
		}
		n++
		for _, t := range tk {
			m1[t] += 1 / float64(l)
		}
		for s := range l {
			for u := range l {
				if u == s {
					continue
				}
				e2[tk[s]*d+tk[u]] += 1 / float64(l*(l-1))
				for v := range l {
					if v == s || v == u {
						continue
					}
					e3[(tk[s]*d+tk[u])*d+tk[v]] += 1 / float64(l*(l-1)*(l-2))
				}
			}
		}
	}
	for _, x := range [][]float64{m1, e2, e3} {
		for i := range x {
			x[i] /= float64(n)
		}
	}
	return
}

func randDense(r, c int, seed uint64) *mat.Dense {
	g := rand.New(rand.NewPCG(seed, 3))
	m := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			m.Set(i, j, g.NormFloat64())
		}
	}
	return m
}

// close reports |a−b| ≤ tol·scale; scale is the size of the quantity compared,
// so the tolerance is relative to it (sums of a few hundred terms: 1e-12).
func near(a, b, tol, scale float64) bool { return math.Abs(a-b) <= tol*scale }

func TestPairAgainstBruteForce(t *testing.T) {
	const d, cols = 6, 4
	b, toks := tinyCorpus(200, d, 1)
	m1, e2, _, n := bruteMoments(toks, d)
	omega := randDense(d, cols, 2)
	acc := NewPairAcc(d, cols)
	acc.Add(b, omega)
	if int(acc.Docs) != n || acc.Docs+acc.Skipped != 200 {
		t.Fatalf("docs=%d skipped=%d, brute force used %d", acc.Docs, acc.Skipped, n)
	}
	want := mat.NewDense(d, cols, nil)
	want.Mul(mat.NewDense(d, d, e2), omega)
	checkPair(t, acc, m1, want)
	// A sparse Ω takes the sparse gather, whether it lists its non-zeros
	// (sketch.Sparse) or is a mostly zero *mat.Dense.
	sparse := sketch.SparseSign(d, cols, 1, 3)
	for _, om := range []mat.Matrix{sparse, mat.DenseCopyOf(sparse)} {
		sacc := NewPairAcc(d, cols)
		sacc.Add(b, om)
		if sacc.sp.rows == nil {
			t.Fatalf("a sparse Ω (%T) did not take the sparse path", om)
		}
		if Fingerprint(om) != Fingerprint(sparse) {
			t.Errorf("the fingerprint of Ω depends on its storage (%T)", om)
		}
		want.Mul(mat.NewDense(d, d, e2), sparse)
		checkPair(t, sacc, m1, want)
	}
}

// checkPair compares the averages of acc with the brute-force M1 and E2·Ω.
func checkPair(t *testing.T, acc *PairAcc, m1 []float64, want *mat.Dense) {
	t.Helper()
	d, cols := want.Dims()
	got := mat.NewDense(d, cols, nil)
	gm1, err := acc.Mean(got)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d {
		if !near(gm1[i], m1[i], 1e-12, 1) {
			t.Errorf("M1[%d] = %g, want %g", i, gm1[i], m1[i])
		}
		for j := range cols {
			if !near(got.At(i, j), want.At(i, j), 1e-12, 1) {
				t.Errorf("E2Ω[%d,%d] = %g, want %g", i, j, got.At(i, j), want.At(i, j))
			}
		}
	}
}

func TestTripleAgainstBruteForce(t *testing.T) {
	const d, k = 7, 3
	b, toks := tinyCorpus(300, d, 3)
	m1, e2, e3, _ := bruteMoments(toks, d)
	w := randDense(d, k, 4)
	acc := NewTripleAcc(d, k)
	acc.Add(b, w)
	got, err := acc.Moments(w, 2)
	if err != nil {
		t.Fatal(err)
	}
	for a := range k {
		wm := 0.0
		for i := range d {
			wm += m1[i] * w.At(i, a)
		}
		if !near(got.M1[a], wm, 1e-12, 1) {
			t.Errorf("M̃1[%d] = %g, want %g", a, got.M1[a], wm)
		}
		for i := range d {
			s := 0.0
			for j := range d {
				s += e2[i*d+j] * w.At(j, a)
			}
			if !near(got.E2W.At(i, a), s, 1e-12, 1) {
				t.Errorf("(Ê2·W)[%d,%d] = %g, want %g", i, a, got.E2W.At(i, a), s)
			}
			if a == 0 && !near(got.RawM1[i], m1[i], 1e-12, 1) {
				t.Errorf("M̂1[%d] = %g, want %g", i, got.RawM1[i], m1[i])
			}
		}
		for bb := range k {
			s := 0.0
			for i := range d {
				for j := range d {
					s += e2[i*d+j] * w.At(i, a) * w.At(j, bb)
				}
			}
			if !near(got.E2.At(a, bb), s, 1e-12, 1) {
				t.Errorf("Ẽ2[%d,%d] = %g, want %g", a, bb, got.E2.At(a, bb), s)
			}
			for c := range k {
				s := 0.0
				for i := range d {
					for j := range d {
						for l := range d {
							s += e3[(i*d+j)*d+l] * w.At(i, a) * w.At(j, bb) * w.At(l, c)
						}
					}
				}
				if !near(got.E3.At(a, bb, c), s, 1e-11, 1) {
					t.Errorf("Ẽ3[%d,%d,%d] = %g, want %g", a, bb, c, got.E3.At(a, bb, c), s)
				}
			}
		}
	}
}

// TestExplicitMatchesImplicit compares T(I,θ,θ) of the packed tensor with the
// operator over cached rows, on a corpus big enough to cross row chunks and
// with k not a multiple of the GEMM block; the larger vocabulary crosses the
// blocks of words of the W terms too.
func TestExplicitMatchesImplicit(t *testing.T) {
	for _, d := range []int{40, WRows + 40} {
		t.Run(fmt.Sprint(d), func(t *testing.T) { explicitMatchesImplicit(t, d) })
	}
}

func explicitMatchesImplicit(t *testing.T, d int) {
	const k, l = 11, 7
	b, _ := tinyCorpus(opRows+500, d, 5)
	w := randDense(d, k, 6)
	acc := NewTripleAcc(d, k)
	acc.KeepRows = true
	acc.Add(b, w)
	mom, err := acc.Moments(w, 2)
	if err != nil {
		t.Fatal(err)
	}
	op, err := acc.Operator(w)
	if err != nil {
		t.Fatal(err)
	}
	corr := Correction{A: -0.3, B: 0.2, V: mom.M1, M: mom.E2}
	corr.AddTo(mom.E3)
	theta := randDense(k, l, 7)
	want := mat.NewDense(k, l, nil)
	got := mat.NewDense(k, l, nil)
	ctx := context.Background()
	if err := mom.E3.Apply(ctx, want, theta); err != nil {
		t.Fatal(err)
	}
	if err := (&Corrected{T: op, C: corr}).Apply(ctx, got, theta); err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(got, want)
	if r := mat.Norm(&diff, 2) / mat.Norm(want, 2); r > 1e-9 {
		t.Fatalf("explicit and implicit T(I,θ,θ) differ: relative %.3g", r)
	}
}

// TestMerge checks that statistics of two shards merge into those of their
// union (up to the rounding of a different summation order).
func TestMerge(t *testing.T) {
	const d, k = 30, 5
	all, _ := tinyCorpus(900, d, 8)
	w := randDense(d, k, 9)
	omega := randDense(d, k+2, 10)
	half := func(lo, hi int) *stream.Docs {
		b := &stream.Docs{Offsets: []int{0}}
		for i := lo; i < hi; i++ {
			b.AppendDoc(all.Doc(i))
		}
		return b
	}
	pa, pb, pall := NewPairAcc(d, k+2), NewPairAcc(d, k+2), NewPairAcc(d, k+2)
	ta, tb, tall := NewTripleAcc(d, k), NewTripleAcc(d, k), NewTripleAcc(d, k)
	for _, acc := range []*TripleAcc{ta, tb, tall} {
		acc.KeepRows = true
	}
	pa.Add(half(0, 400), omega)
	pb.Add(half(400, 900), omega)
	pall.Add(all, omega)
	ta.Add(half(0, 400), w)
	tb.Add(half(400, 900), w)
	tall.Add(all, w)
	if err := pa.Merge(pb); err != nil {
		t.Fatal(err)
	}
	if err := ta.Merge(tb); err != nil {
		t.Fatal(err)
	}
	if pa.Counts != pall.Counts || ta.Counts != tall.Counts {
		t.Fatalf("counts %+v %+v, want %+v", pa.Counts, ta.Counts, pall.Counts)
	}
	same := func(name string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: lengths %d and %d", name, len(a), len(b))
		}
		for i := range a {
			if !near(a[i], b[i], 1e-12, math.Max(1, math.Abs(b[i]))) {
				t.Fatalf("%s[%d]: merged %g, union %g", name, i, a[i], b[i])
			}
		}
	}
	same("M1", pa.M1, pall.M1)
	same("E2Ω", pa.E2Omega, pall.E2Omega)
	same("Y3", ta.Y3, tall.Y3)
	same("Z", ta.Z, tall.Z)
	same("G3", ta.G3, tall.G3)
	same("G2", ta.G2, tall.G2)
	same("Z2", ta.Z2, tall.Z2)
	same("M1", ta.M1, tall.M1)
	same("rows", ta.Rows, tall.Rows)
	if err := pa.Merge(NewPairAcc(d+1, k+2)); err == nil {
		t.Fatal("merge of different shapes accepted")
	}
}

func TestNoDocs(t *testing.T) {
	b := &stream.Docs{Offsets: []int{0}}
	b.AppendDoc([]int32{1}, []int32{2})
	acc := NewTripleAcc(3, 2)
	acc.Add(b, randDense(3, 2, 1))
	if _, err := acc.Moments(randDense(3, 2, 1), 1); err != ErrNoDocs {
		t.Fatalf("err = %v", err)
	}
	if acc.Skipped != 1 {
		t.Fatalf("skipped = %d", acc.Skipped)
	}
}

// TestTransform checks T(P,P,P) against the definition on a small tensor.
func TestTransform(t *testing.T) {
	const k, m = 4, 3
	v := randDense(k, 5, 11)
	tt := solver.FromFactors([]float64{1, -2, 0.5, 3, 1}, v)
	p := randDense(k, m, 12)
	got := Transform(tt, p)
	for a := range m {
		for b := range m {
			for c := range m {
				s := 0.0
				for i := range k {
					for j := range k {
						for l := range k {
							s += tt.At(i, j, l) * p.At(i, a) * p.At(j, b) * p.At(l, c)
						}
					}
				}
				if !near(got.At(a, b, c), s, 1e-12, math.Max(1, math.Abs(s))) {
					t.Fatalf("T(P,P,P)[%d,%d,%d] = %g, want %g", a, b, c, got.At(a, b, c), s)
				}
			}
		}
	}
}

// TestTransformBlocks checks T(P,P,P) against the definition where the
// output's slices come in more than one block (transformBlock), for P wider
// and narrower than square: every entry of the first, last and a boundary
// slice, and random others.
func TestTransformBlocks(t *testing.T) {
	for _, m := range []int{transformBlock + 5, 2*transformBlock + 1} {
		const k = 40
		v := randDense(k, 7, 21)
		tt := solver.FromFactors([]float64{1, -2, 0.5, 3, 1, 0.25, -1}, v)
		p := randDense(k, m, 22)
		got := Transform(tt, p)
		want := func(a, b, c int) float64 {
			s := 0.0
			for i := range k {
				si := 0.0
				for j := range k {
					sj := 0.0
					for l := range k {
						sj += tt.At(i, j, l) * p.At(l, c)
					}
					si += sj * p.At(j, b)
				}
				s += si * p.At(i, a)
			}
			return s
		}
		check := func(a, b, c int) {
			w := want(a, b, c)
			if g := got.At(a, b, c); !near(g, w, 1e-11, math.Max(1, math.Abs(w))) {
				t.Fatalf("m=%d: T(P,P,P)[%d,%d,%d] = %g, want %g", m, a, b, c, g, w)
			}
		}
		for _, a := range []int{0, transformBlock - 1, transformBlock, m - 1} {
			for b := a; b < m; b++ {
				for _, c := range []int{b, (b + m) / 2, m - 1} {
					check(a, b, c)
				}
			}
		}
		rng := rand.New(rand.NewPCG(5, uint64(m)))
		for range 200 {
			check(rng.IntN(m), rng.IntN(m), rng.IntN(m))
		}
	}
}

func TestMergeRefusesOtherBasis(t *testing.T) {
	b, _ := tinyCorpus(50, 5, 1)
	x, y := NewTripleAcc(5, 2), NewTripleAcc(5, 2)
	x.Add(b, randDense(5, 2, 1))
	y.Add(b, randDense(5, 2, 2))
	if err := x.Merge(y); !errors.Is(err, ErrBasis) {
		t.Fatalf("err = %v, want ErrBasis", err)
	}
	p, q := NewPairAcc(5, 2), NewPairAcc(5, 2)
	p.Add(b, randDense(5, 2, 1))
	if err := p.Merge(q); err != nil { // empty statistics merge with anything
		t.Fatal(err)
	}
	q.Add(b, randDense(5, 2, 3))
	if err := p.Merge(q); !errors.Is(err, ErrBasis) {
		t.Fatalf("err = %v, want ErrBasis", err)
	}
}

// TestJSONRoundTrip checks that the exported fields are the whole statistic:
// a decoded accumulator gives the same moments and merges like the original.
func TestJSONRoundTrip(t *testing.T) {
	const d, k = 9, 3
	b, _ := tinyCorpus(200, d, 13)
	w := randDense(d, k, 14)
	acc := NewTripleAcc(d, k)
	acc.Add(b, w)
	buf, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}
	var back TripleAcc
	if err := json.Unmarshal(buf, &back); err != nil {
		t.Fatal(err)
	}
	m1, _ := acc.Moments(w, 2)
	m2, err := back.Moments(w, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m1.E3.Data, m2.E3.Data) || !mat.Equal(m1.E2, m2.E2) || m1.Counts != m2.Counts {
		t.Fatal("decoded statistics give different moments")
	}
	if err := back.Merge(acc); err != nil {
		t.Fatal(err)
	}
}

// TestTransformedMatchesTransform compares the implicit change of basis with
// the explicit one.
func TestTransformedMatchesTransform(t *testing.T) {
	const k = 6
	tt := solver.FromFactors([]float64{1, 2, 0.5, 3}, randDense(k, 4, 15))
	p := randDense(k, k, 16)
	theta := randDense(k, 5, 17)
	want, got := mat.NewDense(k, 5, nil), mat.NewDense(k, 5, nil)
	ctx := context.Background()
	if err := Transform(tt, p).Apply(ctx, want, theta); err != nil {
		t.Fatal(err)
	}
	if err := (&Transformed{T: tt, P: p}).Apply(ctx, got, theta); err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(got, want)
	if r := mat.Norm(&diff, 2) / mat.Norm(want, 2); r > 1e-12 {
		t.Fatalf("relative difference %.3g", r)
	}
}
