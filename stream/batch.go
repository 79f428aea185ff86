package stream

import (
	"fmt"
	"sync"
)

// Docs is a batch of sparse documents in compressed sparse row form: document i
// of the batch holds the distinct term ids Terms[Offsets[i]:Offsets[i+1]] with the
// matching non-negative Counts. Term ids are 0-based indices into the vocabulary.
//
// A batch belongs to whoever received it; calling Release hands its memory back to
// the source for reuse, after which it must not be touched.
type Docs struct {
	// Start is the 0-based index, within its source, of the batch's first document.
	Start int64
	// Offsets has Len()+1 entries, starting at 0.
	Offsets []int
	Terms   []int32
	Counts  []int32

	pool putter
}

// putter takes released batches back: the shared sync.Pool, or a pass's
// FreeList.
type putter interface{ Put(any) }

var docsPool = sync.Pool{New: func() any { return &Docs{Offsets: []int{0}} }}

// NewDocs returns an empty batch starting at document start, taken from a shared
// pool; Release returns it there.
func NewDocs(start int64) *Docs {
	b := docsPool.Get().(*Docs)
	b.pool = &docsPool
	b.Reset(start)
	return b
}

// Reset empties the batch, keeping its memory, and sets its first document index.
func (b *Docs) Reset(start int64) {
	b.Start = start
	b.Offsets = append(b.Offsets[:0], 0)
	b.Terms = b.Terms[:0]
	b.Counts = b.Counts[:0]
}

// Release hands the batch back to its pool (or free list). Batches not made by
// NewDocs or a FreeList ignore it.
func (b *Docs) Release() {
	if b == nil || b.pool == nil {
		return
	}
	p := b.pool
	b.pool = nil
	p.Put(b)
}

// Len is the number of documents in the batch.
func (b *Docs) Len() int { return len(b.Offsets) - 1 }

// NNZ is the number of stored (term, count) entries in the batch.
func (b *Docs) NNZ() int { return len(b.Terms) }

// Doc returns the terms and counts of document i of the batch (not copies).
func (b *Docs) Doc(i int) (terms, counts []int32) {
	lo, hi := b.Offsets[i], b.Offsets[i+1]
	return b.Terms[lo:hi], b.Counts[lo:hi]
}

// Length is the number of tokens of document i: the sum of its counts.
func (b *Docs) Length(i int) int64 {
	var n int64
	for _, c := range b.Counts[b.Offsets[i]:b.Offsets[i+1]] {
		n += int64(c)
	}
	return n
}

// Tokens is the number of tokens in the whole batch.
func (b *Docs) Tokens() int64 {
	var n int64
	for _, c := range b.Counts {
		n += int64(c)
	}
	return n
}

// Reserve makes sure the empty batch b has room for need entries: when it has
// less, its arrays are replaced by new ones of exactly max(need, room)
// entries (append would round up by its own growth). Passes reserve a quarter
// more than a typical batch, so a reused batch is sized once, not regrown
// (leaving its old arrays as garbage) each time a batch comes slightly
// larger than any before: a longer pass would see more of those and hold
// more.
func (b *Docs) Reserve(need, room int) {
	room = max(room, need)
	if cap(b.Terms) < need {
		b.Terms = make([]int32, 0, room)
	}
	if cap(b.Counts) < need {
		b.Counts = make([]int32, 0, room)
	}
}

// Add appends one entry to the document being built; EndDoc closes it.
func (b *Docs) Add(term, count int32) {
	b.Terms = append(b.Terms, term)
	b.Counts = append(b.Counts, count)
}

// EndDoc closes the document being built by Add (possibly empty).
func (b *Docs) EndDoc() { b.Offsets = append(b.Offsets, len(b.Terms)) }

// AppendDoc appends a whole document.
func (b *Docs) AppendDoc(terms, counts []int32) {
	if len(terms) != len(counts) {
		panic(fmt.Sprintf("stream: AppendDoc with %d terms and %d counts", len(terms), len(counts)))
	}
	b.Terms = append(b.Terms, terms...)
	b.Counts = append(b.Counts, counts...)
	b.EndDoc()
}

// Clone returns a deep copy that does not belong to any pool.
func (b *Docs) Clone() *Docs {
	return &Docs{
		Start:   b.Start,
		Offsets: append([]int(nil), b.Offsets...),
		Terms:   append([]int32(nil), b.Terms...),
		Counts:  append([]int32(nil), b.Counts...),
	}
}

// Validate checks the batch's invariants against a vocabulary of size d (d <= 0
// skips the range check): offsets well formed, term ids in range and distinct
// within a document, counts non-negative. Errors name the document by its index
// in the source. seen is scratch space of length d or nil; it is left zeroed.
func (b *Docs) Validate(d int) error {
	if len(b.Offsets) == 0 || b.Offsets[0] != 0 || b.Offsets[len(b.Offsets)-1] != len(b.Terms) || len(b.Terms) != len(b.Counts) {
		return fmt.Errorf("malformed batch at document %d: offsets do not match entries", b.Start)
	}
	var seen map[int32]struct{}
	for i := 0; i < b.Len(); i++ {
		lo, hi := b.Offsets[i], b.Offsets[i+1]
		if hi < lo {
			return fmt.Errorf("document %d: offsets decrease", b.Start+int64(i))
		}
		if seen == nil {
			seen = make(map[int32]struct{}, hi-lo)
		}
		clear(seen)
		for j := lo; j < hi; j++ {
			t, c := b.Terms[j], b.Counts[j]
			if t < 0 || (d > 0 && int(t) >= d) {
				return fmt.Errorf("document %d: term id %d outside the vocabulary [0,%d)", b.Start+int64(i), t, d)
			}
			if c < 0 {
				return fmt.Errorf("document %d: negative count %d for term %d", b.Start+int64(i), c, t)
			}
			if _, dup := seen[t]; dup {
				return fmt.Errorf("document %d: term %d appears twice", b.Start+int64(i), t)
			}
			seen[t] = struct{}{}
		}
	}
	return nil
}

// Dense is a batch of dense sample rows: Rows × Cols float64 values in row-major
// order, with an optional integer id per row (a group, set or sequence id, as the
// model needs; rows of one sequence come in order).
type Dense struct {
	// Start is the 0-based index, within its source, of the batch's first row.
	Start      int64
	Rows, Cols int
	Data       []float64
	// Group is nil when the source has no id column, else one id per row.
	Group []int64

	pool putter
}

var densePool = sync.Pool{New: func() any { return &Dense{} }}

// NewDense returns an empty batch of rows with cols columns starting at row start,
// taken from a shared pool; Release returns it there.
func NewDense(start int64, cols int) *Dense {
	b := densePool.Get().(*Dense)
	b.pool = &densePool
	b.Start, b.Rows, b.Cols = start, 0, cols
	b.Data = b.Data[:0]
	b.Group = nil
	return b
}

// Release hands the batch back to its pool. Batches not made by NewDense ignore it.
func (b *Dense) Release() {
	if b == nil || b.pool == nil {
		return
	}
	p := b.pool
	b.pool = nil
	p.Put(b)
}

// Len is the number of rows in the batch.
func (b *Dense) Len() int { return b.Rows }

// Row returns row i (not a copy).
func (b *Dense) Row(i int) []float64 { return b.Data[i*b.Cols : (i+1)*b.Cols] }

// AppendRow appends one row (and its id, which is ignored unless the batch has ids).
func (b *Dense) AppendRow(x []float64) {
	if len(x) != b.Cols {
		panic(fmt.Sprintf("stream: AppendRow with %d values into %d columns", len(x), b.Cols))
	}
	b.Data = append(b.Data, x...)
	b.Rows++
}

// FreeList recycles the document batches of one pass: a Recycler of
// batches, kept for the pass's lifetime (unlike the shared pool behind
// NewDocs, which the collector empties every cycle) and handed out
// oldest-released first, so a pass reuses a fixed set of batches. It is
// dropped with the pass. Safe for concurrent use.
type FreeList struct {
	r Recycler[Docs]
}

// NewFreeList returns a free list holding n empty batches (they get memory
// when first filled). A pass that never has more than n batches out at once
// then allocates no other, whatever its timing (see ResultSlots).
func NewFreeList(n int) *FreeList {
	l := &FreeList{}
	l.r.Prefill(n)
	return l
}

// Get returns an empty batch starting at document start; Release hands it
// back to l.
func (l *FreeList) Get(start int64) *Docs {
	b := l.r.Get()
	b.pool = l
	b.Reset(start)
	return b
}

// Put takes back a batch released by its holder.
func (l *FreeList) Put(x any) { l.r.Put(x.(*Docs)) }
