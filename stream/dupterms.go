package stream

// DupTerms finds a term id given twice within one document, for the
// readers that check each document's entries (columnar lists and long
// tables, scipy's .npz). Its table holds, for each id, the number of the
// document where the id was last seen, so a new document costs nothing but
// Next. It grows with the largest id met, not with a vocabulary size a
// file declares (a damaged one could declare any), up to dupTableMax ids
// (64 MB); larger ids, which only a huge vocabulary has, go to a map.
type DupTerms struct {
	stamp []uint32
	gen   uint32
	big   map[int64]uint32
}

// dupTableMax bounds DupTerms's table.
const dupTableMax = 1 << 24

// NewDupTerms returns a table with room for the ids below n (a vocabulary
// size; 0 when unknown: the table grows as ids come).
func NewDupTerms(n int) *DupTerms {
	return &DupTerms{stamp: make([]uint32, min(max(n, 0), dupTableMax)), gen: 1}
}

// Next starts a document.
func (s *DupTerms) Next() {
	s.gen++
	if s.gen == 0 {
		clear(s.stamp)
		clear(s.big)
		s.gen = 1
	}
}

// Add records id t (≥ 0) in the current document and reports whether the
// document had it already.
func (s *DupTerms) Add(t int64) bool {
	if uint64(t) < uint64(len(s.stamp)) {
		if s.stamp[t] == s.gen {
			return true
		}
		s.stamp[t] = s.gen
		return false
	}
	return s.addBeyond(t)
}

// Table returns the table and the current document's number, for a
// reader's loop over entries (Add, which may grow the table, is too large
// to inline there): an id t below len(table) is in the document when
// table[t] == gen, and setting it to gen records it. Valid until the next
// Add or Next; ids past the table go through Add.
func (s *DupTerms) Table() ([]uint32, uint32) { return s.stamp, s.gen }

// addBeyond is Add for an id past the table: the table grows (doubling,
// at least to t) or, past dupTableMax, the map takes it.
func (s *DupTerms) addBeyond(t int64) bool {
	if t < 0 {
		panic("stream: DupTerms.Add of a negative id")
	}
	if t < dupTableMax {
		n := min(max(t+1, 2*int64(len(s.stamp)), 1024), dupTableMax)
		s.stamp = append(s.stamp, make([]uint32, n-int64(len(s.stamp)))...)
		s.stamp[t] = s.gen
		return false
	}
	if s.big == nil {
		s.big = map[int64]uint32{}
	}
	if s.big[t] == s.gen {
		return true
	}
	s.big[t] = s.gen
	return false
}
