package stream

import "testing"

// Reserve sizes an empty batch once: arrays of exactly the room asked for
// when the need does not fit, left alone (the same arrays) when it does.
func TestDocsReserve(t *testing.T) {
	var b Docs
	b.Reserve(10, 12)
	if cap(b.Terms) != 12 || cap(b.Counts) != 12 {
		t.Fatalf("caps %d, %d after Reserve(10, 12) on an empty batch, want 12", cap(b.Terms), cap(b.Counts))
	}
	terms := &b.Terms[:1][0]
	b.Reserve(12, 40)
	if cap(b.Terms) != 12 || &b.Terms[:1][0] != terms {
		t.Fatal("Reserve replaced arrays that had room for the need")
	}
	b.Reserve(13, 0)
	if cap(b.Terms) != 13 || cap(b.Counts) != 13 || len(b.Terms) != 0 {
		t.Fatalf("caps %d, %d after Reserve(13, 0), want exactly 13", cap(b.Terms), cap(b.Counts))
	}
}
