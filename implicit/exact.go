package implicit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

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
//	V = H·2^(e+63) + L·2^e,   H an integer with |H| < 2^50, 0 ≤ L < 2^63,
//
// and truncates each batch partial to a multiple of 2^e before adding it, a
// function of the partial alone. Integer addition is associative, so any
// grouping of the same partials gives the same V, and the same float64 when V
// is rounded. The resolution 2^e of an array is 2^-66 of a bound on what one
// document adds to it, which depends only on the projection (Ω or W, the same
// on every shard); totals may reach 2^47 such bounds. That is far finer than
// the float32 partials themselves (relative 6e-8), so nothing measurable is
// lost, and far more documents than any corpus holds.
//
// Between passes the accumulator's own float64 array holds round(V), so
// everything that reads the accumulator works unchanged, and Exact holds the
// low words L; H is recovered from round(V) and L (unround). During a pass the
// array holds H·2^(e+63), and each batch's commit folds its partial sums into
// it row by row as it forms them (addTotal), so nothing is copied per batch.

const (
	// fixedFracBits is the resolution below a document's bound.
	fixedFracBits = 66
	// fixedHiBits bounds |H|: with |V| < 2^(e+113), round(V) is within a
	// quarter of 2^(e+63) of V, so H can be recovered from it.
	fixedHiBits = 50
	// fixedLoBits is the width of a low word: 63 bits, so that a value
	// converts to it by a signed conversion (one instruction, where a
	// conversion to uint64 branches) and the carry of a sum is its bit 63.
	fixedLoBits = 63
	fixedLoMask = 1<<fixedLoBits - 1
)

// ErrOverflow reports a total beyond the exact range of its array.
var ErrOverflow = errors.New("implicit: a total left its exact fixed-point range (more than 2^47 times one document's bound, or not finite)")

// fixedScale is the resolution of one array: values H·hi + L·lo with
// hi = 2^63·lo.
type fixedScale struct {
	exp       int
	lo, hi    float64
	limit     float64 // 2^fixedHiBits·hi
	invLo, iv float64 // 1/lo, 1/hi
}

func newFixedScale(exp int) fixedScale {
	return fixedScale{exp: exp, lo: math.Ldexp(1, exp), hi: math.Ldexp(1, exp+fixedLoBits), limit: math.Ldexp(1, exp+fixedLoBits+fixedHiBits),
		invLo: math.Ldexp(1, -exp), iv: math.Ldexp(1, -exp-fixedLoBits)}
}

// scaleFor is the resolution for totals of documents that each add at most
// about bound.
func scaleFor(bound float64) fixedScale {
	if !(bound > 0) || math.IsInf(bound, 0) {
		bound = 1
	}
	return newFixedScale(math.Ilogb(bound) - fixedFracBits)
}

// add adds x to the total whose high part is *v (H·hi) and low word *lo. It
// reports false when the total leaves the exact range.
func (s fixedScale) add(v *float64, lo *uint64, x float64) bool {
	vs, los := [1]float64{*v}, [1]uint64{*lo}
	ok := foldFixed(s, vs[:], []float64{x}, los[:])
	*v, *lo = vs[0], los[0]
	return ok
}

// foldFixed adds the values of x exactly to the totals of resolution s with
// high parts dst and low words lo, in place. It reports false when a total
// leaves the exact range.
//
// Each value is truncated towards zero to a multiple of lo and split as
// h·hi + l·lo (h an integer held in a float64, l < 2^63, two's complement
// below), without a branch or a call: the signs of partial sums are random,
// a branch on them would be mispredicted half the time, and this loop runs
// over every total a batch touches.
func foldFixed[F real](s fixedScale, dst []float64, x []F, lo []uint64) bool {
	dst, lo = dst[:len(x)], lo[:len(x)]
	iv, hi, invLo, limit := s.iv, s.hi, s.invLo, s.limit
	bad := false
	for j, xf := range x {
		x := float64(xf)
		a := math.Abs(x)
		// Truncation by signed conversion; a value beyond int64 (or NaN)
		// gives a huge h, which the range check reports.
		h := float64(int64(a * iv))
		r := a - h*hi // exact: r < hi and a multiple of ulp(a)
		l := uint64(int64(r * invLo))
		// For x < 0 (neg all ones): −(h·hi + l·lo) = (−h−1)·hi + (2^63−l)·lo
		// when l > 0, and −h·hi when l = 0.
		neg := uint64(int64(math.Float64bits(x)) >> 63)
		borrow := neg & ((l + fixedLoMask) >> fixedLoBits)
		h = math.Copysign(h, x) - float64(borrow)
		l = ((l ^ neg) - neg) & fixedLoMask
		sum := lo[j] + l
		lo[j] = sum & fixedLoMask
		v := dst[j] + (h+float64(sum>>fixedLoBits))*hi
		dst[j] = v
		bad = bad || !(math.Abs(v) < limit)
	}
	return !bad
}

// addFixed adds the total (v2, l2) to (*v, *lo), both as high parts.
func (s fixedScale) addFixed(v *float64, lo *uint64, v2 float64, l2 uint64) bool {
	sum := *lo + l2
	*lo = sum & fixedLoMask
	*v += v2 + float64(sum>>fixedLoBits)*s.hi
	return math.Abs(*v) < s.limit
}

// round returns the float64 nearest (within two roundings) to the total
// with high part v and low word l. It is a function of (v, l) alone.
func (s fixedScale) round(v float64, l uint64) float64 {
	if v >= 0 || l == 0 {
		return v + float64(l)*s.lo
	}
	// V = (H+1)·hi − (2^63−L)·lo: two terms of one sign, no cancellation.
	return (v + s.hi) - float64(1<<fixedLoBits-l)*s.lo
}

// unround recovers the high part of a total from round(V) and its low word.
func (s fixedScale) unround(r float64, l uint64) float64 {
	return math.Round((r-float64(l)*s.lo)*s.iv) * s.hi
}

// fixedArray is one exact total array: the accumulator's float64 values and
// their low words.
type fixedArray struct {
	name  string
	v     []float64
	lo    []uint64
	scale fixedScale
	// field is the accumulator's field holding v, which TopicStats.Merge
	// detaches while the accumulator merges everything but the totals.
	field *[]float64
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
	run     passFunc
}

// passFunc runs one pass of an accumulator.
type passFunc = func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int), fold *batchFold) error

func pairRun(a *PairAcc, omega mat.Matrix) passFunc {
	return func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int), fold *batchFold) error {
		return a.pass(ctx, docs, workers, omega, onBatch, fold)
	}
}

func tripleRun(a *TripleAcc, w *mat.Dense) passFunc {
	return func(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int), fold *batchFold) error {
		return a.pass(ctx, docs, workers, w, onBatch, fold)
	}
}

// NewPairExact makes a's totals exact for passes against omega. Values a
// already holds are taken in as they are, unless prev (the exact state read
// with a from a file) gives their low words.
func NewPairExact(a *PairAcc, omega mat.Matrix, prev *Exact) (*Exact, error) {
	e := &Exact{arrays: pairArrays(a, scaleFor(1), scaleFor(maxAbs(omega))), run: pairRun(a, omega)}
	return e, e.adopt(prev)
}

// NewTripleExact makes a's totals exact for passes whitened by w, as
// NewPairExact.
func NewTripleExact(a *TripleAcc, w *mat.Dense, prev *Exact) (*Exact, error) {
	m := maxAbs(w)
	m3 := m * m * m
	if !a.Cubes.All() {
		m3 /= a.Cubes.Rate // a sampled document's cube weighs 1/rate
	}
	a.sampleSums()
	// A cube's squared norm: k³ entries of at most about m3 each.
	s6 := scaleFor(m3 * m3 * float64(a.K*a.K*a.K))
	e := &Exact{arrays: tripleArrays(a, scaleFor(1), scaleFor(m), scaleFor(m3), s6), run: tripleRun(a, w)}
	return e, e.adopt(prev)
}

// pairArrays lists a's totals with the scales of M1 and E2·Ω.
func pairArrays(a *PairAcc, s0, s1 fixedScale) []fixedArray {
	return []fixedArray{
		{name: "pair.m1", v: a.M1, scale: s0, field: &a.M1},
		{name: "pair.e2omega", v: a.E2Omega, scale: s1, field: &a.E2Omega},
	}
}

// tripleArrays lists a's totals with the scales of the scalar, linear and
// cubic ones, and of the cube sample's squared norms.
func tripleArrays(a *TripleAcc, s0, s1, s3, s6 fixedScale) []fixedArray {
	arrays := []fixedArray{
		{name: "triple.m1", v: a.M1, scale: s0, field: &a.M1},
		{name: "triple.g2", v: a.G2, scale: s0, field: &a.G2},
		{name: "triple.g3", v: a.G3, scale: s0, field: &a.G3},
		{name: "triple.z", v: a.Z, scale: s1, field: &a.Z},
	}
	if a.Z2 != nil {
		arrays = append(arrays, fixedArray{name: "triple.z2", v: a.Z2, scale: s1, field: &a.Z2})
	}
	if a.Y3 != nil {
		arrays = append(arrays, fixedArray{name: "triple.y3", v: a.Y3, scale: s3, field: &a.Y3})
	}
	if a.CubeSq != nil {
		arrays = append(arrays, fixedArray{name: "triple.cubesq", v: a.CubeSq, scale: s6, field: &a.CubeSq})
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
	return e.sameArrays(o, true)
}

// sameArrays reports how o's arrays differ from e's in name and resolution
// and, with lengths, in length (not for exact totals described by a file's
// metadata, whose sections carry the lengths).
func (e *Exact) sameArrays(o *Exact, lengths bool) error {
	if len(e.arrays) != len(o.arrays) {
		return fmt.Errorf("implicit: exact totals of %d and %d arrays", len(e.arrays), len(o.arrays))
	}
	for i, a := range e.arrays {
		b := o.arrays[i]
		if a.name != b.name || (lengths && len(a.v) != len(b.v)) || a.scale.exp != b.scale.exp {
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
		if err := a.addFrom(0, b.v, b.lo); err != nil {
			return err
		}
	}
	e.Batches += o.Batches
	return nil
}

// addFrom adds the rounded totals (v, lo) of a's resolution to a's values
// from off on.
func (a *fixedArray) addFrom(off int, v []float64, lo []uint64) error {
	s := a.scale
	dst, dlo := a.v[off:off+len(v)], a.lo[off:off+len(v)]
	for j := range v {
		h := s.unround(dst[j], dlo[j])
		if !s.addFixed(&h, &dlo[j], s.unround(v[j], lo[j]), lo[j]) {
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
// not a whole multiple of its unit means that a commit added to a total
// without addTotal: a broken accumulator, reported.
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
	// Snapshot, when set, is called after a batch has been added, in batch
	// order, with the number of batches the totals hold, at most once every
	// SnapshotEvery (0: after every batch); the totals are rounded and
	// consistent during the call (WriteTopicStats may save them). Its error stops
	// the pass.
	Snapshot      func(batches int64) error
	SnapshotEvery time.Duration
}

// Pass runs one pass of the accumulator e was made for over docs, adding
// every batch's partial sums exactly. onBatch is as for the accumulator's
// Pass. After an error the totals hold the batches added before it.
func (e *Exact) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, onBatch func(int), opt PassOptions) error {
	if e.run == nil {
		return errors.New("implicit: exact totals read from a file cannot run a pass; make them with NewPairExact or NewTripleExact")
	}
	e.toRaw()
	f := &batchFold{e: e, snapshot: opt.Snapshot, every: opt.SnapshotEvery, last: time.Now()}
	err := e.run(ctx, skipBatches(docs, opt.Skip), workers, onBatch, f)
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

// batchFold folds each batch's partial sums into exact totals: the
// commit of a batch adds them with addTotal (on several goroutines, each
// to its own rows), and ordered then calls after, in batch order.
type batchFold struct {
	e        *Exact
	mu       sync.Mutex
	bad      string // the first array that left its exact range
	snapshot func(int64) error
	every    time.Duration
	last     time.Time // of the last snapshot
}

// addTotal adds the partial sums x of a batch to total[off:off+len(x)]:
// by float64 addition without a fold, else exactly into the exact array
// that holds total.
func addTotal[F real](f *batchFold, total []float64, off int, x []F) {
	if f == nil {
		addTo(total[off:off+len(x)], x)
		return
	}
	foldAt(f, f.array(total), off, x)
}

// foldAt folds x exactly into a's totals from off on, noting an overflow
// for after.
func foldAt[F real](f *batchFold, a *fixedArray, off int, x []F) {
	if !foldFixed(a.scale, a.v[off:], x, a.lo[off:]) {
		f.mu.Lock()
		if f.bad == "" {
			f.bad = a.name
		}
		f.mu.Unlock()
	}
}

// array returns the exact array whose values are total.
func (f *batchFold) array(total []float64) *fixedArray {
	for i := range f.e.arrays {
		if a := &f.e.arrays[i]; &a.v[0] == &total[0] {
			return a
		}
	}
	panic("implicit: a commit added to a total that has no exact array")
}

// after ends a batch whose partials have been folded: it reports an
// overflow, counts the batch and takes a snapshot when one is due.
func (f *batchFold) after() error {
	if f.bad != "" {
		return fmt.Errorf("%w: %s", ErrOverflow, f.bad)
	}
	f.e.Batches++
	if f.snapshot != nil && time.Since(f.last) >= f.every {
		f.last = time.Now()
		if err := f.e.toRounded(); err != nil {
			return err
		}
		err := f.snapshot(f.e.Batches)
		f.e.toRaw()
		return err
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

// exactMeta describes exact totals in a statistics file: per array its
// name and resolution; the low words follow as sections (statsfile.go).
type exactMeta struct {
	Batches int64            `json:"batches"`
	Arrays  []exactArrayMeta `json:"arrays"`
}

type exactArrayMeta struct {
	Name string `json:"name"`
	Exp  int    `json:"exp"`
}

// meta describes e for a statistics file.
func (e *Exact) meta() (*exactMeta, error) {
	if e.raw {
		return nil, errors.New("implicit: exact totals saved during a pass")
	}
	m := &exactMeta{Batches: e.Batches, Arrays: make([]exactArrayMeta, len(e.arrays))}
	for i, a := range e.arrays {
		m.Arrays[i] = exactArrayMeta{Name: a.name, Exp: a.scale.exp}
	}
	return m, nil
}

// exact returns the totals m describes, without values or low words (bind
// attaches them).
func (m *exactMeta) exact() (*Exact, error) {
	if m.Batches < 0 {
		return nil, fmt.Errorf("exact totals of %d batches", m.Batches)
	}
	e := &Exact{Batches: m.Batches, arrays: make([]fixedArray, len(m.Arrays))}
	for i, a := range m.Arrays {
		if a.Exp < -1000 || a.Exp > 900 {
			return nil, fmt.Errorf("exact totals %s at resolution 2^%d", a.Name, a.Exp)
		}
		e.arrays[i] = fixedArray{name: a.Name, scale: newFixedScale(a.Exp)}
	}
	return e, nil
}

// bind attaches exact totals read from a file to the totals of the
// accumulators stored with them, which must be exactly those e describes.
func (e *Exact) bind(pair *PairAcc, triple *TripleAcc) error {
	var want []fixedArray
	if pair != nil {
		want = pairArrays(pair, fixedScale{}, fixedScale{})
	}
	if triple != nil {
		want = append(want, tripleArrays(triple, fixedScale{}, fixedScale{}, fixedScale{}, fixedScale{})...)
	}
	if len(want) != len(e.arrays) {
		return fmt.Errorf("exact totals of %d arrays for %d totals", len(e.arrays), len(want))
	}
	for i, w := range want {
		a := &e.arrays[i]
		if a.lo == nil {
			a.lo = make([]uint64, len(w.v))
		}
		if a.name != w.name || len(a.lo) != len(w.v) {
			return fmt.Errorf("exact totals %s of %d values for %s of %d", a.name, len(a.lo), w.name, len(w.v))
		}
		a.v, a.field = w.v, w.field
	}
	return nil
}

// mergeDetached runs merge, the accumulators' own Merge of e's and o's
// accumulators, with their totals detached (see detached), and then adds
// the totals exactly (e.Merge).
func (e *Exact) mergeDetached(o *Exact, merge func() error) error {
	if err := e.same(o); err != nil {
		return err
	}
	if err := detached(merge, e, o); err != nil {
		return err
	}
	return e.Merge(o)
}

// detached runs merge with the accumulator fields holding the totals of
// each of es set to nil, and then restores them: the accumulators' Merge
// then checks shapes and bases and adds counts and kept rows, but leaves
// the totals to the exact merge.
func detached(merge func() error, es ...*Exact) error {
	for _, x := range es {
		for _, a := range x.arrays {
			*a.field = nil
		}
	}
	err := merge()
	for _, x := range es {
		for _, a := range x.arrays {
			*a.field = a.v
		}
	}
	return err
}
