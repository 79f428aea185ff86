package stream

import "sync/atomic"

// Share returns n views of b for n consumers of one batch: each holds b's
// arrays (read only) and belongs to no pool of its own, and b is released
// (back to its source's pool or free list) when the last view is. b must
// not be released otherwise, nor touched after its views are handed out.
func (b *Docs) Share(n int) []*Docs {
	s := &sharedDocs{b: b}
	s.left.Store(int64(n))
	vs := make([]*Docs, n)
	for i := range vs {
		vs[i] = &Docs{Start: b.Start, Offsets: b.Offsets, Terms: b.Terms, Counts: b.Counts, pool: s}
	}
	return vs
}

// sharedDocs releases a shared batch when its views have all been released.
type sharedDocs struct {
	b    *Docs
	left atomic.Int64
}

// Put takes back one view.
func (s *sharedDocs) Put(any) {
	if s.left.Add(-1) == 0 {
		s.b.Release()
	}
}
