package columnar

import "testing"

func TestBufPool(t *testing.T) {
	var p bufPool
	b := p.Allocate(1000)
	for i := range b {
		b[i] = 0xff
	}
	p.Free(b)
	c := p.Allocate(900)
	if &c[0] != &b[0] {
		t.Fatal("a freed buffer that fits was not reused")
	}
	for i, x := range c {
		if x != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	c[0], c[899] = 1, 2
	d := p.Reallocate(5000, c)
	if len(d) != 5000 || d[0] != 1 || d[899] != 2 || d[900] != 0 || d[4999] != 0 {
		t.Fatal("Reallocate lost the contents or did not zero the rest")
	}
	if e := p.Allocate(100); &e[0] != &c[0] {
		t.Fatal("the buffer Reallocate outgrew was not taken back")
	}
	// Sizes that keep growing: each buffer replaces the last, never piling up.
	var q bufPool
	for n := 1000; n < 100000; n += n / 4 {
		q.Free(q.Allocate(n))
		if len(q.free) != 1 {
			t.Fatalf("after a buffer of %d bytes the pool holds %d buffers, want 1", n, len(q.free))
		}
	}
	for range 2 * maxPooled {
		p.Free(make([]byte, 10))
	}
	if len(p.free) > maxPooled {
		t.Fatalf("pool holds %d buffers, bound %d", len(p.free), maxPooled)
	}
}
