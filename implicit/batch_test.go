package implicit

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// randomDocs returns n documents of lo to lo+40 distinct terms of a
// vocabulary of d words, with counts 1–3.
func randomDocs(r *rand.Rand, n, d, lo int) *stream.Docs {
	b := &stream.Docs{Offsets: []int{0}}
	for range n {
		for _, t := range r.Perm(d)[:lo+r.IntN(41)] {
			b.Terms = append(b.Terms, int32(t))
			b.Counts = append(b.Counts, int32(1+r.IntN(3)))
		}
		b.Offsets = append(b.Offsets, len(b.Terms))
	}
	return b
}

// Once a batch of a source has been prepared, further batches of as many
// documents with up to a fifth more entries (batches of one source differ
// by a few percent) reuse every buffer: a pass allocates nothing per batch
// in steady state. Garbage per batch lets the heap creep to the GC's goal
// over a long pass, so that peak memory grows with the number of documents.
func TestPrepareSteadyStateAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d = 500
	first := randomDocs(r, 256, d, 20)
	var others []*stream.Docs
	for lo := 20; lo <= 28; lo++ { // mean length 40 → 48: nnz +20%
		others = append(others, randomDocs(r, 256, d, lo))
	}
	// Mallocs counts the whole process, so another goroutine (the runtime,
	// a previous test's) can add to one trial; an allocation of prepare's
	// shows in every trial, so the fewest of five must be zero.
	var p batch
	fewest := uint64(math.MaxUint64)
	for range 5 {
		p = batch{}
		p.prepare(first, d)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, b := range others {
			p.prepare(b, d)
		}
		runtime.ReadMemStats(&after)
		fewest = min(fewest, after.Mallocs-before.Mallocs)
	}
	if fewest != 0 {
		t.Fatalf("%d batches after the first allocated %d times (fewest of 5 trials), want 0", len(others), fewest)
	}
	// The buffers describe the last batch: every entry is regrouped.
	if got, want := len(p.tm.ent), others[len(others)-1].NNZ(); got != want {
		t.Fatalf("regrouped %d entries, want %d", got, want)
	}
}
