package implicit

import (
	"context"
	"errors"
	"iter"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// bigValue is the exact value H·2^(e+63) + L·2^e of a total with high part v.
func bigValue(s fixedScale, v float64, l uint64) *big.Float {
	h := new(big.Float).SetPrec(0).SetFloat64(v)
	lo := new(big.Float).SetPrec(0).SetMantExp(new(big.Float).SetUint64(l), s.exp)
	return new(big.Float).SetPrec(200).Add(h, lo)
}

// TestFixedArithmetic checks the fixed-point totals against big.Float: adding
// truncates each value towards zero to the resolution and is otherwise exact,
// round is within one ulp of the exact value, and unround recovers the high
// part from it over the whole range.
func TestFixedArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, exp := range []int{-66, -100, -20, 10} {
		s := newFixedScale(exp)
		var v float64
		var lo uint64
		want := new(big.Float).SetPrec(400)
		for i := range 20000 {
			// Values over 40 binades below and above the resolution, both signs.
			x := math.Ldexp(r.Float64()+0.5, exp+r.IntN(90)+10)
			if r.IntN(2) == 0 {
				x = -x
			}
			if i%100 == 0 {
				x = math.Ldexp(float64(r.IntN(5)-2), exp) // a few units of the resolution
			}
			if !s.add(&v, &lo, x) {
				t.Fatalf("exp %d: overflow after %d values", exp, i)
			}
			// Truncated towards zero to a multiple of 2^exp.
			q := new(big.Float).SetPrec(0).SetMantExp(big.NewFloat(1), -exp)
			tx := new(big.Float).SetPrec(400).Mul(big.NewFloat(x), q)
			ti, _ := tx.Int(nil)
			want.Add(want, new(big.Float).SetPrec(0).SetMantExp(new(big.Float).SetInt(ti), exp))
			if i%997 == 0 || i == 19999 {
				got := bigValue(s, v, lo)
				if got.Cmp(want) != 0 {
					t.Fatalf("exp %d, after %d values: total %s, want %s", exp, i+1, got.Text('g', 40), want.Text('g', 40))
				}
				rv := s.round(v, lo)
				exact, _ := want.Float64()
				if math.Abs(rv-exact) > 2*ulp(exact) {
					t.Fatalf("exp %d: round %g, exact %g", exp, rv, exact)
				}
				if h := s.unround(rv, lo); h != v {
					t.Fatalf("exp %d: unround %g, high part %g", exp, h, v)
				}
			}
		}
	}
	// unround across the range, for both signs and every low word size.
	s := newFixedScale(-66)
	for range 100000 {
		h := float64(r.Int64N(1<<fixedHiBits) - 1<<(fixedHiBits-1))
		if r.IntN(3) == 0 {
			h = float64(r.IntN(5) - 2)
		}
		l := r.Uint64() >> (1 + r.IntN(63))
		v := h * s.hi
		if got := s.unround(s.round(v, l), l); got != v {
			t.Fatalf("unround(round(%g·hi + %d·lo)) = %g·hi", h, l, got*s.iv)
		}
	}
	var v float64
	var lo uint64
	if s.add(&v, &lo, math.Ldexp(1, s.exp+fixedLoBits+fixedHiBits)) || s.add(&v, &lo, math.NaN()) {
		t.Error("a value beyond the range was accepted")
	}
}

func ulp(x float64) float64 { return math.Nextafter(math.Abs(x), math.Inf(1)) - math.Abs(x) }

// exactPair runs an exact pass over documents [lo, hi) of docs in batches of
// rows and returns the accumulator and its exact totals.
func exactPair(t *testing.T, docs *stream.Docs, rows, lo, hi int, omega mat.Matrix) (*PairAcc, *Exact) {
	t.Helper()
	d, cols := omega.Dims()
	a := NewPairAcc(d, cols)
	a.Float32 = true
	e, err := NewPairExact(a, omega, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Pass(context.Background(), batchRange(docs, rows, lo, hi), 2, nil, PassOptions{}); err != nil {
		t.Fatal(err)
	}
	return a, e
}

func exactTriple(t *testing.T, docs *stream.Docs, rows, lo, hi int, w *mat.Dense) (*TripleAcc, *Exact) {
	t.Helper()
	d, k := w.Dims()
	a := NewTripleAcc(d, k)
	a.Float32 = true
	e, err := NewTripleExact(a, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Pass(context.Background(), batchRange(docs, rows, lo, hi), 2, nil, PassOptions{}); err != nil {
		t.Fatal(err)
	}
	return a, e
}

// batchRange is batches of rows documents over documents [lo, hi) of docs
// (lo and hi multiples of rows, so shards cut batches where the whole does).
func batchRange(docs *stream.Docs, rows, lo, hi int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	sub := &stream.Docs{Offsets: []int{0}}
	for i := lo; i < hi; i++ {
		sub.AppendDoc(docs.Doc(i))
	}
	return batches(sub, rows, -1)
}

// TestExactMergeOrder is the property exact totals exist for: statistics of
// shards merged in any grouping equal the statistics of the whole, bit for
// bit, where plain float64 totals differ in the last bits.
func TestExactMergeOrder(t *testing.T) {
	const d, k, rows = 80, 7, 50
	docs, _ := tinyCorpus(3000, d, 31)
	omega := randDense(d, k+3, 32)
	w := randDense(d, k, 33)
	for i := range d {
		for j := range k {
			w.Set(i, j, w.At(i, j)*math.Pow(10, float64(i%7-3))) // entries over six decades
		}
	}
	cuts := [][2]int{{0, 1000}, {1000, 2350}, {2350, 3000}}
	wholeP, _ := exactPair(t, docs, rows, 0, 3000, omega)
	wholeT, _ := exactTriple(t, docs, rows, 0, 3000, w)
	var ps [3]*PairAcc
	var pe [3]*Exact
	var ts [3]*TripleAcc
	var te [3]*Exact
	for i, c := range cuts {
		ps[i], pe[i] = exactPair(t, docs, rows, c[0], c[1], omega)
		ts[i], te[i] = exactTriple(t, docs, rows, c[0], c[1], w)
	}
	clonePair := func(i int) (*PairAcc, *Exact) {
		a := &PairAcc{D: d, Cols: k + 3, Counts: ps[i].Counts, M1: slices.Clone(ps[i].M1), E2Omega: slices.Clone(ps[i].E2Omega), Basis: ps[i].Basis}
		e, err := NewPairExact(a, omega, &Exact{arrays: []fixedArray{
			{name: "pair.m1", v: a.M1, lo: slices.Clone(pe[i].arrays[0].lo), scale: pe[i].arrays[0].scale},
			{name: "pair.e2omega", v: a.E2Omega, lo: slices.Clone(pe[i].arrays[1].lo), scale: pe[i].arrays[1].scale},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return a, e
	}
	// ((A,B),C), (A,(B,C)) and (C,A),B against the whole.
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}, {1, 2, 0}} {
		a, e := clonePair(order[0])
		for _, i := range order[1:] {
			b, f := clonePair(i)
			a.Counts.Merge(b.Counts)
			if err := e.Merge(f); err != nil {
				t.Fatal(err)
			}
		}
		if a.Counts != wholeP.Counts || !slices.Equal(a.M1, wholeP.M1) || !slices.Equal(a.E2Omega, wholeP.E2Omega) {
			t.Errorf("pair statistics merged in order %v differ from the whole", order)
		}
	}
	// (A,(B,C)) for the triple statistics, through TripleAcc and Exact merges.
	bc, bce := cloneTriple(t, ts[1], te[1], w)
	c, ce := cloneTriple(t, ts[2], te[2], w)
	mergeTriple(t, bc, bce, c, ce)
	a, ae := cloneTriple(t, ts[0], te[0], w)
	mergeTriple(t, a, ae, bc, bce)
	for name, p := range map[string][2][]float64{"Y3": {a.Y3, wholeT.Y3}, "Z": {a.Z, wholeT.Z}, "Z2": {a.Z2, wholeT.Z2},
		"G2": {a.G2, wholeT.G2}, "G3": {a.G3, wholeT.G3}, "M1": {a.M1, wholeT.M1}} {
		if !slices.Equal(p[0], p[1]) {
			t.Errorf("triple %s merged (A,(B,C)) differs from the whole", name)
		}
	}
	if a.Counts != wholeT.Counts {
		t.Errorf("counts %+v, whole %+v", a.Counts, wholeT.Counts)
	}
	// The same shards with plain float64 totals may differ in the last bits
	// (sums of float32 partials often are exact in float64, but not in
	// general), and by rounding only.
	plain := NewTripleAcc(d, k)
	plain.Float32 = true
	for _, cut := range [][2]int{{1000, 2350}, {2350, 3000}, {0, 1000}} {
		p := NewTripleAcc(d, k)
		p.Float32 = true
		if err := p.Pass(context.Background(), batchRange(docs, rows, cut[0], cut[1]), 2, w, nil); err != nil {
			t.Fatal(err)
		}
		if err := plain.Merge(p); err != nil {
			t.Fatal(err)
		}
	}
	var worst, scale float64
	for i, v := range plain.Y3 {
		worst = max(worst, math.Abs(v-wholeT.Y3[i]))
		scale = max(scale, math.Abs(wholeT.Y3[i]))
	}
	t.Logf("plain float64 merge vs exact whole: Y3 differs by %.3g relative to its largest entry", worst/scale)
	if worst > 1e-13*scale {
		t.Errorf("exact totals differ from plain float64 sums by %.3g relative, more than rounding", worst/scale)
	}
}

func cloneTriple(t *testing.T, src *TripleAcc, se *Exact, w *mat.Dense) (*TripleAcc, *Exact) {
	t.Helper()
	a := &TripleAcc{D: src.D, K: src.K, Counts: src.Counts, Basis: src.Basis, Y3: slices.Clone(src.Y3), Z: slices.Clone(src.Z),
		Z2: slices.Clone(src.Z2), G3: slices.Clone(src.G3), G2: slices.Clone(src.G2), M1: slices.Clone(src.M1)}
	prev := &Exact{arrays: tripleArrays(a, se.arrays[0].scale, se.arrays[3].scale, se.arrays[5].scale, fixedScale{})}
	for i := range prev.arrays {
		prev.arrays[i].lo = slices.Clone(se.arrays[i].lo)
	}
	e, err := NewTripleExact(a, w, prev)
	if err != nil {
		t.Fatal(err)
	}
	return a, e
}

func mergeTriple(t *testing.T, a *TripleAcc, ae *Exact, b *TripleAcc, be *Exact) {
	t.Helper()
	c := a.Counts
	c.Merge(b.Counts)
	if err := ae.Merge(be); err != nil {
		t.Fatal(err)
	}
	a.Counts = c
}

// TestExactResume checks that a pass stopped after some batches and resumed
// with Skip gives the totals of an uninterrupted pass, bit for bit, and that
// Snapshot sees every batch in order.
func TestExactResume(t *testing.T) {
	const d, k, rows = 60, 5, 40
	docs, _ := tinyCorpus(2000, d, 41)
	w := randDense(d, k, 42)
	whole, _ := exactTriple(t, docs, rows, 0, 2000, w)

	a := NewTripleAcc(d, k)
	a.Float32 = true
	e, err := NewTripleExact(a, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("killed")
	var seen []int64
	err = e.Pass(context.Background(), batches(docs, rows, -1), 2, nil, PassOptions{Snapshot: func(n int64) error {
		seen = append(seen, n)
		if n == 17 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || e.Batches != 17 || !slices.Equal(seen, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}) {
		t.Fatalf("interrupted pass: %v after %d batches, snapshots %v", err, e.Batches, seen)
	}
	if a.Docs != 17*rows-a.Skipped {
		t.Errorf("after 17 batches of %d: %d documents used and %d skipped", rows, a.Docs, a.Skipped)
	}
	if err := e.Pass(context.Background(), batches(docs, rows, -1), 2, nil, PassOptions{Skip: e.Batches}); err != nil {
		t.Fatal(err)
	}
	if e.Batches != 50 || a.Counts != whole.Counts || !slices.Equal(a.Y3, whole.Y3) || !slices.Equal(a.Z, whole.Z) || !slices.Equal(a.Z2, whole.Z2) {
		t.Errorf("resumed pass differs from the whole (%d batches)", e.Batches)
	}
	// A source with fewer batches than the totals hold is refused.
	err = e.Pass(context.Background(), batches(docs, rows, -1), 2, nil, PassOptions{Skip: 51})
	if err == nil {
		t.Error("skipping more batches than the source has succeeded")
	}
}

// BenchmarkExactPass measures what exact totals cost a pass: the same pass
// of an LDA corpus (d=20000, documents of about 100 words, batches of the
// default 4096) with plain float64 totals and with exact ones. Compare the
// sub-benchmarks of one run (benchstat).
func BenchmarkExactPass(b *testing.B) {
	const d, k, cols, rows = 20000, 50, 60, stream.DefaultBatchRows
	docs, err := ldaDocs(4*rows, d, k, 100, 5, rows)
	if err != nil {
		b.Fatal(err)
	}
	src := batches(docs, rows, -1)
	omega, w := randDense(d, cols, 6), randDense(d, k, 7)
	run := func(b *testing.B, exact bool, newAcc func() (any, func(onBatch func(int)) error, *Exact)) {
		for b.Loop() {
			_, pass, e := newAcc()
			var err error
			if exact {
				err = e.Pass(context.Background(), src, 2, nil, PassOptions{})
			} else {
				err = pass(nil)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, exact := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "exact"}[exact]
		b.Run("pair/"+name, func(b *testing.B) {
			run(b, exact, func() (any, func(func(int)) error, *Exact) {
				a := NewPairAcc(d, cols)
				a.Float32 = true
				e, _ := NewPairExact(a, omega, nil)
				return a, func(on func(int)) error { return a.Pass(context.Background(), src, 2, omega, on) }, e
			})
		})
		b.Run("triple/"+name, func(b *testing.B) {
			run(b, exact, func() (any, func(func(int)) error, *Exact) {
				a := NewTripleAcc(d, k)
				a.Float32 = true
				e, _ := NewTripleExact(a, w, nil)
				return a, func(on func(int)) error { return a.Pass(context.Background(), src, 2, w, on) }, e
			})
		})
	}
}

// TestExactOverflow checks that a total leaving its exact range stops the
// pass with ErrOverflow naming the array, for totals folded row by row on
// several goroutines (Z, Z2) and whole (Y3).
func TestExactOverflow(t *testing.T) {
	const d, k, rows = 60, 5, 40
	docs, _ := tinyCorpus(400, d, 45)
	w := randDense(d, k, 46)
	for _, name := range []string{"triple.z", "triple.y3", "triple.m1"} {
		a := NewTripleAcc(d, k)
		e, err := NewTripleExact(a, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range e.arrays {
			if e.arrays[i].name == name {
				// A range of 2^-7: the first batch leaves it.
				e.arrays[i].scale = newFixedScale(-120)
			}
		}
		err = e.Pass(context.Background(), batches(docs, rows, -1), 2, nil, PassOptions{})
		if !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s out of range: %v", name, err)
		}
	}
}
