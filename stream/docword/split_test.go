package docword

import "testing"

// A pass's pools start with chunkSlots buffers (and two fewer parts) and hand
// out the oldest released first, so all of them are in use after the first
// few chunks whatever the pass's timing; a buffer too small is grown.
func TestPassPoolsRotate(t *testing.T) {
	pl := newPassPools(2)
	n := chunkSlots(2)
	seen := map[*[]byte]bool{}
	var out []*[]byte
	for range n {
		b := pl.getBuf(100)
		if seen[b] || len(*b) != 100 {
			t.Fatal("a buffer handed out twice, or of the wrong length")
		}
		seen[b] = true
		out = append(out, b)
	}
	if b := pl.getBuf(10); seen[b] {
		t.Fatal("all buffers are out, yet one came back")
	}
	pl.bufs.Put(out[3])
	pl.bufs.Put(out[1])
	if b := pl.getBuf(50); b != out[3] || cap(*b) < 100 {
		t.Fatal("not the oldest released buffer, or its memory was dropped")
	}
	if b := pl.getBuf(1000); b != out[1] || len(*b) != 1000 {
		t.Fatal("a released buffer too small was not grown")
	}
	parts := map[*part]bool{}
	for range n - 2 {
		parts[pl.parts.Get()] = true
	}
	if len(parts) != n-2 {
		t.Fatalf("%d distinct parts, want %d", len(parts), n-2)
	}
}
