package stream

import (
	"math"
	"testing"
)

// TestDupTerms: an id given twice in a document is found, the same id in
// the next document is not, whether it lies in the initial table, in the
// grown one, or past the table's bound (the map); the document count's
// wrap-around forgets the earlier documents.
func TestDupTerms(t *testing.T) {
	s := NewDupTerms(10)
	ids := []int64{3, 9, 500, 70000, dupTableMax - 1, dupTableMax, dupTableMax + 12345}
	for doc := range 3 {
		s.Next()
		for _, id := range ids {
			if s.Add(id) {
				t.Fatalf("document %d: id %d reported twice at its first use", doc, id)
			}
		}
		for _, id := range ids {
			if !s.Add(id) {
				t.Fatalf("document %d: id %d given twice not found", doc, id)
			}
		}
	}
	if len(s.stamp) > dupTableMax {
		t.Fatalf("table of %d ids, bound %d", len(s.stamp), dupTableMax)
	}
	// Two wrap-arounds land on the same document number: the second must
	// not see the ids of the document after the first.
	for wrap := range 2 {
		s.gen = math.MaxUint32
		s.Next()
		for _, id := range ids {
			if s.Add(id) {
				t.Fatalf("wrap-around %d: id %d of an earlier document reported", wrap, id)
			}
		}
	}
}
