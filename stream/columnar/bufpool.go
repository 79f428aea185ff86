package columnar

import (
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bufPool is the memory.Allocator of a pass's Parquet readers. A column
// chunk's page reader allocates its page and decompression buffers (about a
// page each) when it opens and frees them when it is closed; with Go's
// allocator every row group of a pass then left a few MB of garbage, and the
// heap crept up to the collector's goal over the first million documents, so
// a short pass peaked lower than a long one. The pool keeps freed buffers for
// the pass's lifetime and hands them out again, so after the first row groups
// a pass allocates no page buffers. It holds no more buffers than were in use
// at once (and at most maxPooled). Safe for concurrent use.
type bufPool struct {
	mu   sync.Mutex
	free [][]byte // by capacity, ascending
}

// maxPooled bounds the buffers kept: a few per column reader of each worker.
const maxPooled = 64

var _ memory.Allocator = (*bufPool)(nil)

// Allocate returns a zeroed buffer of size bytes, the smallest free one that
// fits if there is one.
func (p *bufPool) Allocate(size int) []byte {
	if size <= 0 {
		return []byte{}
	}
	p.mu.Lock()
	i, _ := slices.BinarySearchFunc(p.free, size, func(b []byte, n int) int { return cap(b) - n })
	var b []byte
	if i < len(p.free) {
		b = p.free[i]
		p.free = slices.Delete(p.free, i, i+1)
	} else if n := len(p.free); n > 0 {
		// Every free buffer is too small: drop the largest, as the new one
		// takes its place, so the pool never holds more buffers than were
		// in use at once, however the sizes drift.
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if b == nil {
		// A little headroom, so a buffer that grows by a few bytes page to page
		// is not replaced each time.
		return make([]byte, size, size+size/8)
	}
	b = b[:size]
	clear(b)
	return b
}

// Reallocate returns a buffer of size bytes starting with b's contents.
func (p *bufPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		n := len(b)
		b = b[:size]
		if size > n {
			clear(b[n:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes b back. When the pool is full the smallest buffer is dropped.
func (p *bufPool) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.free, cap(b), func(x []byte, n int) int { return cap(x) - n })
	p.free = slices.Insert(p.free, i, b)
	if len(p.free) > maxPooled {
		p.free = slices.Delete(p.free, 0, 1)
	}
}
