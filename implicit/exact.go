package implicit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// Exact totals.
//
// A pass adds one partial sum per batch to each total. Floating-point
// addition is not associative, so the same partials added in another
// grouping (two shards merged, three shards merged in another order, a pass
// resumed from a checkpoint) would give totals that differ in the last bits.
// Exact keeps every total as a fixed-point number
//
//	V = H·2^(e+64) + L·2^e,   H an integer with |H| < 2^50, 0 ≤ L < 2^64,
//
// and truncates each batch partial to a multiple of 2^e before adding it, a
// function of the partial alone. Integer addition is associative, so any
// grouping of the same partials gives the same V, and the same float64 when V
// is rounded. The resolution 2^e of an array is 2^-66 of a bound on what one
// document adds to it, which depends only on the projection (Ω or W, the same
// on every shard); totals may reach 2^48 such bounds. That is far finer than
// the float32 partials themselves (relative 6e-8), so nothing measurable is
// lost, and far more documents than any corpus holds.
//
// Between passes the accumulator's own float64 array holds round(V), so
// everything that reads the accumulator works unchanged, and Exact holds the
// low words L; H is recovered from round(V) and L (unround). During a pass the
// array holds H·2^(e+64) and each batch's partial is folded in by ordered, per
// batch and only over the terms the batch touched.

const (
	// fixedFracBits is the resolution below a document's bound.
	fixedFracBits = 66
	// fixedHiBits bounds |H|: with |V| < 2^(e+114), round(V) is within a
	// quarter of 2^(e+64) of V, so H can be recovered from it.
	fixedHiBits = 50
)

// ErrOverflow reports a total beyond the exact range of its array.
var ErrOverflow = errors.New("implicit: a total left its exact fixed-point range (more than 2^48 times one document's bound, or not finite)")

// fixedScale is the resolution of one array: values H·hi + L·lo with
// hi = 2^64·lo.
type fixedScale struct {
	exp       int
	lo, hi    float64
	limit     float64 // 2^fixedHiBits·hi
	invLo, iv float64 // 1/lo, 1/hi
}

func newFixedScale(exp int) fixedScale {
	return fixedScale{exp: exp, lo: math.Ldexp(1, exp), hi: math.Ldexp(1, exp+64), limit: math.Ldexp(1, exp+64+fixedHiBits),
		invLo: math.Ldexp(1, -exp), iv: math.Ldexp(1, -exp-64)}
}

// scaleFor is the resolution for totals of documents that each add at most
// about bound.
func scaleFor(bound float64) fixedScale {
	if !(bound > 0) || math.IsInf(bound, 0) {
		bound = 1
	}
	return newFixedScale(math.Ilogb(bound) - fixedFracBits)
}

// split truncates x towards zero to a multiple of lo and returns it as
// h·hi + l·lo (h an integer held in a float64, two's complement below).
func (s fixedScale) split(x float64) (h float64, l uint64) {
	a := math.Abs(x)
	h = math.Floor(a * s.iv)
	r := a - h*s.hi // exact: r < hi and a multiple of ulp(a)
	l = uint64(r * s.invLo)
	if x < 0 {
		if l == 0 {
			return -h, 0
		}
		return -h - 1, -l
	}
	return h, l
}

// add adds x to the total whose high part is *v (H·hi) and low word *lo. It
// reports false when the total leaves the exact range.
func (s fixedScale) add(v *float64, lo *uint64, x float64) bool {
	h, l := s.split(x)
	var c uint64
	*lo, c = bits.Add64(*lo, l, 0)
	*v += (h + float64(c)) * s.hi
	return math.Abs(*v) < s.limit
}

// addFixed adds the total (v2, l2) to (*v, *lo), both as high parts.
func (s fixedScale) addFixed(v *float64, lo *uint64, v2 float64, l2 uint64) bool {
	var c uint64
	*lo, c = bits.Add64(*lo, l2, 0)
	*v += v2 + float64(c)*s.hi
	return math.Abs(*v) < s.limit
}

// round returns the float64 nearest (within two roundings) to the total
// with high part v and low word l. It is a function of (v, l) alone.
func (s fixedScale) round(v float64, l uint64) float64 {
	if v >= 0 || l == 0 {
		return v + float64(l)*s.lo
	}
	// V = (H+1)·hi − (2^64−L)·lo: two terms of one sign, no cancellation.
	return (v + s.hi) - float64(-l)*s.lo
}

// unround recovers the high part of a total from round(V) and its low word.
func (s fixedScale) unround(r float64, l uint64) float64 {
	return math.Round((r-float64(l)*s.lo)*s.iv) * s.hi
}

// fixedArray is one exact total array: the accumulator's float64 values and
// their low words.
type fixedArray struct {
	name   string
	v      []float64
	lo     []uint64
	scale  fixedScale
	stride int // values per vocabulary term; 0: every batch adds to all of it
}

// Exact makes the totals of one accumulator exact and order-independent (see
// above). It is made for an accumulator by NewPairExact or NewTripleExact,
// read with it from a statistics file, and merged with Merge.
type Exact struct {
	arrays []fixedArray
	raw    bool // arrays hold high parts (during a pass)
	// Batches counts the batches the passes have added, which a resumed
	// pass skips.
	Batches int64
	run     func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int)) error
}

// NewPairExact makes a's totals exact for passes against omega. Values a
// already holds are taken in as they are, unless prev (the exact state read
// with a from a file) gives their low words.
func NewPairExact(a *PairAcc, omega mat.Matrix, prev *Exact) (*Exact, error) {
	e := &Exact{arrays: []fixedArray{
		{name: "pair.m1", v: a.M1, stride: 1, scale: scaleFor(1)},
		{name: "pair.e2omega", v: a.E2Omega, stride: a.Cols, scale: scaleFor(maxAbs(omega))},
	}}
	e.run = func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int)) error {
		return a.Pass(ctx, docs, workers, omega, onBatch)
	}
	return e, e.adopt(prev)
}

// NewTripleExact makes a's totals exact for passes whitened by w, as
// NewPairExact.
func NewTripleExact(a *TripleAcc, w *mat.Dense, prev *Exact) (*Exact, error) {
	m := maxAbs(w)
	e := &Exact{arrays: tripleArrays(a, scaleFor(1), scaleFor(m), scaleFor(m*m*m))}
	e.run = func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int)) error {
		return a.Pass(ctx, docs, workers, w, onBatch)
	}
	return e, e.adopt(prev)
}

// tripleArrays lists a's totals with the scales of the scalar, linear and
// cubic ones.
func tripleArrays(a *TripleAcc, s0, s1, s3 fixedScale) []fixedArray {
	arrays := []fixedArray{
		{name: "triple.m1", v: a.M1, stride: 1, scale: s0},
		{name: "triple.g2", v: a.G2, stride: 1, scale: s0},
		{name: "triple.g3", v: a.G3, stride: 1, scale: s0},
		{name: "triple.z", v: a.Z, stride: a.K, scale: s1},
		{name: "triple.z2", v: a.Z2, stride: a.K, scale: s1},
	}
	if a.Y3 != nil {
		arrays = append(arrays, fixedArray{name: "triple.y3", v: a.Y3, scale: s3})
	}
	return arrays
}

// adopt takes the low words of prev, whose arrays must be those of e, or
// else takes the values e's arrays hold in as they are.
func (e *Exact) adopt(prev *Exact) error {
	if prev == nil {
		for i := range e.arrays {
			a := &e.arrays[i]
			a.lo = make([]uint64, len(a.v))
			for j, x := range a.v {
				if x == 0 {
					continue
				}
				a.v[j] = 0
				if !a.scale.add(&a.v[j], &a.lo[j], x) {
					return fmt.Errorf("%w: %s", ErrOverflow, a.name)
				}
				a.v[j] = a.scale.round(a.v[j], a.lo[j])
			}
		}
		return nil
	}
	if err := e.same(prev); err != nil {
		return err
	}
	for i := range e.arrays {
		e.arrays[i].lo = prev.arrays[i].lo
	}
	e.Batches = prev.Batches
	return nil
}

// same reports how o's arrays differ from e's, if they do.
func (e *Exact) same(o *Exact) error {
	if len(e.arrays) != len(o.arrays) {
		return fmt.Errorf("implicit: exact totals of %d and %d arrays", len(e.arrays), len(o.arrays))
	}
	for i, a := range e.arrays {
		b := o.arrays[i]
		if a.name != b.name || len(a.v) != len(b.v) || a.scale.exp != b.scale.exp {
			return fmt.Errorf("implicit: exact totals differ: %s (%d values at 2^%d) vs %s (%d values at 2^%d)",
				a.name, len(a.v), a.scale.exp, b.name, len(b.v), b.scale.exp)
		}
	}
	return nil
}

// Merge adds the exact totals of o (another shard's, of the same shape and
// resolution) to e's. The accumulators' counts and other fields are merged
// by their own Merge.
func (e *Exact) Merge(o *Exact) error {
	if err := e.same(o); err != nil {
		return err
	}
	for i := range e.arrays {
		a, b := &e.arrays[i], &o.arrays[i]
		if err := a.addFrom(0, b.v, b.lo, b.scale.unround); err != nil {
			return err
		}
	}
	e.Batches += o.Batches
	return nil
}

// addFrom adds the totals (v, lo) to a's values from off on; high(v, lo)
// gives the high part of a total of v (unround for rounded values).
func (a *fixedArray) addFrom(off int, v []float64, lo []uint64, high func(float64, uint64) float64) error {
	s := a.scale
	dst, dlo := a.v[off:off+len(v)], a.lo[off:off+len(v)]
	for j := range v {
		h := s.unround(dst[j], dlo[j])
		if !s.addFixed(&h, &dlo[j], high(v[j], lo[j]), lo[j]) {
			return fmt.Errorf("%w: %s", ErrOverflow, a.name)
		}
		dst[j] = s.round(h, dlo[j])
	}
	return nil
}

// toRaw turns the arrays' values into high parts for a pass.
func (e *Exact) toRaw() {
	if e.raw {
		return
	}
	for _, a := range e.arrays {
		for j, r := range a.v {
			a.v[j] = a.scale.unround(r, a.lo[j])
		}
	}
	e.raw = true
}

// toRounded turns high parts back into rounded totals. A high part that is
// not a whole multiple of its unit means that a batch added to a total it
// did not declare (see touchedTerms): a broken accumulator, reported.
func (e *Exact) toRounded() error {
	if !e.raw {
		return nil
	}
	e.raw = false
	var bad string
	for _, a := range e.arrays {
		for j, h := range a.v {
			if q := h * a.scale.iv; q != math.Trunc(q) && bad == "" {
				bad = a.name
			}
			a.v[j] = a.scale.round(h, a.lo[j])
		}
	}
	if bad != "" {
		return fmt.Errorf("implicit: %s holds a partial sum outside the terms its batch declared", bad)
	}
	return nil
}

// PassOptions control an exact pass.
type PassOptions struct {
	// Skip drops the first Skip batches of the source: a resumed pass whose
	// totals already hold them (Exact.Batches of the checkpoint).
	Skip int64
	// Snapshot, when set, is called after every batch has been added, in
	// batch order, with the number of batches the totals hold; the totals
	// are consistent during the call (WriteStats may save them). Its error
	// stops the pass.
	Snapshot func(batches int64) error
}

// Pass runs one pass of the accumulator e was made for over docs, adding
// every batch's partial sums exactly. onBatch is as for the accumulator's
// Pass. After an error the totals hold the batches added before it.
func (e *Exact) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int), opt PassOptions) error {
	if e.run == nil {
		return errors.New("implicit: exact totals read from a file cannot run a pass; make them with NewPairExact or NewTripleExact")
	}
	e.toRaw()
	f := &batchFold{e: e, snapshot: opt.Snapshot}
	err := e.run(context.WithValue(ctx, foldKey{}, f), skipBatches(docs, opt.Skip), workers, onBatch)
	if rerr := e.toRounded(); err == nil {
		err = rerr
	}
	return err
}

// skipBatches drops the first n batches of docs.
func skipBatches(docs func(context.Context) iter.Seq2[*stream.Docs, error], n int64) func(context.Context) iter.Seq2[*stream.Docs, error] {
	if n == 0 {
		return docs
	}
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			var i int64
			for b, err := range docs(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				if i < n {
					i++
					b.Release()
					continue
				}
				if !yield(b, nil) {
					return
				}
			}
			if i < n {
				yield(nil, fmt.Errorf("implicit: the source has %d batches, but the totals already hold %d (a different source or batch size)", i, n))
			}
		}
	}
}

// foldKey is the context key under which Exact.Pass hands its batchFold to
// ordered, which runs inside the accumulator's Pass.
type foldKey struct{}

// batchFold folds each batch's partial sums into exact totals. ordered calls
// before just ahead of a batch's commit, which then adds the partials to
// zeroed totals, and after it, which adds them exactly to the saved high
// parts. Both run in batch order, one batch at a time.
type batchFold struct {
	e        *Exact
	save     []float64
	snapshot func(int64) error
}

// touchedTerms lists the vocabulary terms whose rows a batch's commit adds
// to (per-term arrays); other rows are left alone.
func (p *batch) touchedTerms() []int32 { return p.tm.terms }

// terms returns the terms part p's commit touches, or nil for all of them.
func terms(p any) []int32 {
	if t, ok := p.(interface{ touchedTerms() []int32 }); ok {
		return t.touchedTerms()
	}
	return nil
}

// each calls fn on the pieces of a that a batch touching terms adds to.
func (a *fixedArray) each(terms []int32, fn func(seg []float64, off int)) {
	if a.stride == 0 || terms == nil {
		fn(a.v, 0)
		return
	}
	for _, t := range terms {
		off := int(t) * a.stride
		fn(a.v[off:off+a.stride], off)
	}
}

func (f *batchFold) before(p any) {
	tm := terms(p)
	f.save = f.save[:0]
	for i := range f.e.arrays {
		f.e.arrays[i].each(tm, func(seg []float64, _ int) {
			f.save = append(f.save, seg...)
			clear(seg)
		})
	}
}

func (f *batchFold) after(p any) error {
	tm := terms(p)
	k := 0
	var bad string
	for i := range f.e.arrays {
		a := &f.e.arrays[i]
		s := a.scale
		a.each(tm, func(seg []float64, off int) {
			lo := a.lo[off : off+len(seg)]
			for j, x := range seg {
				seg[j] = f.save[k]
				k++
				if x != 0 && !s.add(&seg[j], &lo[j], x) && bad == "" {
					bad = a.name
				}
			}
		})
	}
	if bad != "" {
		return fmt.Errorf("%w: %s", ErrOverflow, bad)
	}
	f.e.Batches++
	if f.snapshot != nil {
		return f.snapshot(f.e.Batches)
	}
	return nil
}

// maxAbs is the largest absolute entry of m.
func maxAbs(m mat.Matrix) float64 {
	var out float64
	switch m := m.(type) {
	case *mat.Dense:
		raw := m.RawMatrix()
		for i := range raw.Rows {
			for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
				out = max(out, math.Abs(v))
			}
		}
	case rowsNZ:
		r, _ := m.(mat.Matrix).Dims()
		for i := range r {
			_, vals := m.RowNZ(i)
			for _, v := range vals {
				out = max(out, math.Abs(v))
			}
		}
	default:
		r, c := m.Dims()
		for i := range r {
			for j := range c {
				out = max(out, math.Abs(m.At(i, j)))
			}
		}
	}
	return out
}
