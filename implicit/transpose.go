package implicit

import "github.com/streamfit/streamfit/stream"

// termMajor is a batch of documents regrouped by term (compressed sparse
// columns): the entries of term t are row[start[t]:start[t+1]] (the row of the
// document in the batch's usable documents) with counts cnt. Scattering per
// term touches each accumulator row once per batch instead of once per
// occurrence, which is what bounds the speed of the d×k accumulators.
type termMajor struct {
	start []int32
	row   []int32
	cnt   []float64
	fill  []int32
}

// build regroups the documents of b whose rows[i] ≥ 0 (the row of document i
// among the usable ones) by term, for a vocabulary of d terms.
func (s *termMajor) build(b *stream.Docs, rows []int32, d int) {
	if len(s.start) != d+1 {
		s.start = make([]int32, d+1)
		s.fill = make([]int32, d)
	}
	clear(s.start)
	n := 0
	for i := range b.Len() {
		if rows[i] < 0 {
			continue
		}
		terms, _ := b.Doc(i)
		for _, t := range terms {
			s.start[t+1]++
		}
		n += len(terms)
	}
	for t := range d {
		s.start[t+1] += s.start[t]
	}
	copy(s.fill, s.start[:d])
	if cap(s.row) < n {
		s.row = make([]int32, n)
		s.cnt = make([]float64, n)
	}
	s.row, s.cnt = s.row[:n], s.cnt[:n]
	for i := range b.Len() {
		r := rows[i]
		if r < 0 {
			continue
		}
		terms, counts := b.Doc(i)
		for j, t := range terms {
			p := s.fill[t]
			s.row[p] = r
			s.cnt[p] = float64(counts[j])
			s.fill[t] = p + 1
		}
	}
}
