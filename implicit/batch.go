package implicit

import (
	"math/bits"
	"slices"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

// termGroups is a batch of documents regrouped by term (compressed sparse
// columns): terms lists the distinct terms of the batch in increasing order,
// and the entries of terms[j] are ent[start[j]:start[j+1]] (the row of the
// document among the batch's usable documents, and the count), in document
// order. Scattering per term touches each accumulator row once per batch
// instead of once per occurrence, and nothing is done per vocabulary word
// the batch does not use when the vocabulary is much larger than the batch.
type termGroups struct {
	terms []int32
	start []int32
	ent   []entry
	slot  []int32 // per vocabulary word; all zero between builds
}

// entry is one (document row, count) pair of a term. Row and count share a
// cache line, so regrouping writes one place per entry.
type entry struct{ row, cnt int32 }

// build regroups the documents i of b with rows[i] ≥ 0 (their row among the
// usable ones) by term, for a vocabulary of d words. It costs O(nnz) plus
// O(min(d, t log t)) for t distinct terms: the terms are listed in order by
// a scan of the vocabulary when that is cheaper than sorting them.
func (s *termGroups) build(b *stream.Docs, rows []int32, d int) {
	if len(s.slot) != d {
		s.slot = make([]int32, d)
	}
	s.terms = s.terms[:0]
	n := 0
	for i := range b.Len() {
		if rows[i] < 0 {
			continue
		}
		terms, _ := b.Doc(i)
		for _, t := range terms {
			if s.slot[t] == 0 {
				s.terms = append(s.terms, t)
			}
			s.slot[t]++
		}
		n += len(terms)
	}
	if nt := len(s.terms); d <= 4*nt*bits.Len(uint(nt)) {
		s.terms = s.terms[:0]
		for t, c := range s.slot {
			if c != 0 {
				s.terms = append(s.terms, int32(t))
			}
		}
	} else {
		slices.Sort(s.terms)
	}
	s.start = slices.Grow(s.start[:0], len(s.terms)+1)[:len(s.terms)+1]
	s.start[0] = 0
	for j, t := range s.terms {
		s.start[j+1] = s.start[j] + s.slot[t]
		s.slot[t] = s.start[j] // now the next free position of t
	}
	if cap(s.ent) < n {
		// A quarter of headroom: batches of one source differ by a few
		// percent, so the first batches do not each grow it (garbage of
		// its size every time).
		s.ent = make([]entry, n, n+n/4)
	}
	s.ent = s.ent[:n]
	for i := range b.Len() {
		r := rows[i]
		if r < 0 {
			continue
		}
		terms, counts := b.Doc(i)
		for j, t := range terms {
			p := s.slot[t]
			s.ent[p] = entry{r, counts[j]}
			s.slot[t] = p + 1
		}
	}
	for _, t := range s.terms {
		s.slot[t] = 0
	}
}

// batch is one batch of documents prepared for accumulation: the usable
// documents (at least MinTokens tokens), their normalisers, the entries by
// term, and the per-term scalar sums every accumulator needs.
type batch struct {
	Counts
	n      int       // usable documents
	docRow []int32   // per document of the batch: its row among the usable ones, or −1
	inv1   []float64 // per usable document: 1/ℓ
	inv2   []float64 // 1/n2 = 1/(ℓ(ℓ−1))
	inv3   []float64 // 1/n3 = 1/(ℓ(ℓ−1)(ℓ−2))
	tm     termGroups
	// Per distinct term j of the batch (tm.terms[j]): Σ c/ℓ, Σ c/n2, Σ c/n3.
	m1, g2, g3 []float64
}

// prepare fills p from b over a vocabulary of d words.
func (p *batch) prepare(b *stream.Docs, d int) {
	p.Counts = Counts{}
	p.docRow = slices.Grow(p.docRow[:0], b.Len())[:b.Len()]
	// At most b.Len() usable documents: sized once, so the appends below
	// never grow them (garbage of their size) in steady state.
	p.inv1 = slices.Grow(p.inv1[:0], b.Len())
	p.inv2 = slices.Grow(p.inv2[:0], b.Len())
	p.inv3 = slices.Grow(p.inv3[:0], b.Len())
	p.n = 0
	for i := range b.Len() {
		l := b.Length(i)
		if !p.count(l) {
			p.docRow[i] = -1
			continue
		}
		p.docRow[i] = int32(p.n)
		p.n++
		fl := float64(l)
		i2 := 1 / (fl * (fl - 1))
		p.inv1 = append(p.inv1, 1/fl)
		p.inv2 = append(p.inv2, i2)
		p.inv3 = append(p.inv3, i2/(fl-2))
	}
	p.tm.build(b, p.docRow, d)
	nt := len(p.tm.terms)
	p.m1, p.g2, p.g3 = growTo(p.m1, nt), growTo(p.g2, nt), growTo(p.g3, nt)
	tm := &p.tm
	for j := range nt {
		var s1, s2, s3 float64
		for _, e := range tm.ent[tm.start[j]:tm.start[j+1]] {
			r, c := e.row, float64(e.cnt)
			s1 += c * p.inv1[r]
			s2 += c * p.inv2[r]
			s3 += c * p.inv3[r]
		}
		p.m1[j], p.g2[j], p.g3[j] = s1, s2, s3
	}
}

// addScalars adds the per-term sums of p into the vocabulary-length totals
// (nil ones are skipped), exactly with a fold (see addTotal).
func (p *batch) addScalars(fold *batchFold, m1, g2, g3 []float64) {
	if fold != nil {
		for _, t := range [3]struct{ total, part []float64 }{{m1, p.m1}, {g2, p.g2}, {g3, p.g3}} {
			if t.total == nil {
				continue
			}
			a := fold.array(t.total)
			for j, term := range p.tm.terms {
				foldAt(fold, a, int(term), t.part[j:j+1])
			}
		}
		return
	}
	for j, t := range p.tm.terms {
		if m1 != nil {
			m1[t] += p.m1[j]
		}
		if g2 != nil {
			g2[t] += p.g2[j]
		}
		if g3 != nil {
			g3[t] += p.g3[j]
		}
	}
}

// batchPool keeps the per-batch buffers of finished passes (the regrouping
// tables, normalisers and per-term sums, each the size of a batch) for the
// next pass, which then does not grow them again from empty: without it
// every pass of a fit began with a few batches' worth of garbage (≈12 MB per
// pass with two workers and batches of 4096 documents of 90 words).
var batchPool sync.Pool

// batchBuffers hands out the buffers of one pass's parts and returns them
// to batchPool when the pass is over. get is called by ordered before its
// workers start, release after they have all returned.
type batchBuffers []*batch

func (bs *batchBuffers) get() *batch {
	b, ok := batchPool.Get().(*batch)
	if !ok {
		b = new(batch)
	}
	*bs = append(*bs, b)
	return b
}

func (bs *batchBuffers) release() {
	for _, b := range *bs {
		batchPool.Put(b)
	}
	*bs = nil
}
