package stream

import "testing"

// A Recycler hands out its prefilled values first, then the oldest released,
// a new value only when none is left, and ignores nil; a FreeList built on
// it rotates batches the same way.
func TestRecyclerOldestFirst(t *testing.T) {
	var r Recycler[int]
	r.Prefill(3)
	a, b, c := r.Get(), r.Get(), r.Get()
	if a == b || b == c || a == c {
		t.Fatal("prefilled values handed out twice")
	}
	d := r.Get() // none left: a new one
	if d == a || d == b || d == c {
		t.Fatal("a value still out was handed out again")
	}
	r.Put(c)
	r.Put(nil)
	r.Put(a)
	if x, y := r.Get(), r.Get(); x != c || y != a {
		t.Fatal("not the oldest released first")
	}
	if x := r.Get(); x == a || x == c {
		t.Fatal("nil was kept, or a value handed out twice")
	}

	l := NewFreeList(2)
	x, y := l.Get(5), l.Get(6)
	if x == y || x.Start != 5 || y.Start != 6 {
		t.Fatal("free list: batches shared or not reset")
	}
	x.Release()
	y.Release()
	if z := l.Get(7); z != x || z.Start != 7 {
		t.Fatal("free list: not the oldest released batch, or not reset")
	}
}
