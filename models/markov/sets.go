package markov

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

// setPass describes one streamed pass whose statistics need whole sets. The
// per-set sums (S1, Σxxᵀ, Σz⊗3, …) are additive within a set, so a set cut by
// a batch boundary is accumulated in pieces that are merged once the set is
// complete: nothing but O(1) pieces per worker is held, however large a set.
type setPass[P any] struct {
	// newPiece allocates empty statistics of a run of rows with one id.
	newPiece func() P
	// reset empties a piece for reuse.
	reset func(P)
	// batch sees every batch once, before any add, on worker w (per-row
	// statistics, whitening the batch into worker scratch).
	batch func(w int, b *stream.Dense)
	// add accumulates rows [lo, hi) of the batch b (already seen by batch on
	// the same worker) into p.
	add func(w int, p P, b *stream.Dense, lo, hi int)
	// merge adds src into dst (two pieces of one set).
	merge func(dst, src P)
	// fold adds the complete set p of n ≥ 3 rows into accumulator acc
	// (0..workers−1 for the workers, workers for the merger).
	fold func(acc int, p P, n int)
	// check, if set, validates row i of a batch (e.g. one-hot rows).
	check func(b *stream.Dense, i int) error
}

// run is a piece of a set: the statistics of rows [first, first+n) with id.
type run[P any] struct {
	id    int64
	first int64
	n     int
	st    P
}

// edges are the first and last runs of one batch: the only ones that may
// continue a set from the previous batch or into the next. tail is nil when
// the batch holds a single run; both are nil for an empty batch.
type edges[P any] struct {
	head, tail *run[P]
}

// setMerger joins the edge runs of consecutive batches in batch order. Workers
// finish batches out of order (by at most a few batches, stream.Each hands
// them out round-robin through one-slot channels), so edges wait in pending
// until their predecessors arrive.
type setMerger[P any] struct {
	mu      sync.Mutex
	sp      *setPass[P]
	acc     int
	path    string
	next    int64 // index of the next batch to join
	pending map[int64]edges[P]
	open    *run[P] // the set that may continue into the next batch
	lastID  int64
	started bool
	sets    int64
	err     error
	pool    sync.Pool
}

// closeRun folds a complete set (checking its size) and recycles the piece.
func (m *setMerger[P]) closeRun(r *run[P]) error {
	if r == nil {
		return nil
	}
	if r.n < 3 {
		return tooSmall(m.path, r)
	}
	m.sp.fold(m.acc, r.st, r.n)
	m.sets++
	m.pool.Put(r)
	return nil
}

func tooSmall[P any](path string, r *run[P]) error {
	return stream.Errorf(path, 0, r.first, "", stream.ErrValue, "set %d has %d rows; within-set triples need at least 3", r.id, r.n)
}

// submit hands over the edges of batch number idx and joins every batch that
// is now in order.
func (m *setMerger[P]) submit(idx int64, e edges[P]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.pending[idx] = e
	for {
		e, ok := m.pending[m.next]
		if !ok {
			return nil
		}
		delete(m.pending, m.next)
		m.next++
		if err := m.join(e); err != nil {
			m.err = err
			return err
		}
	}
}

// join continues the open set with the batch's head and leaves its tail open.
func (m *setMerger[P]) join(e edges[P]) error {
	if e.head == nil {
		return nil
	}
	if m.started && e.head.id < m.lastID {
		return outOfOrder(m.path, e.head.first, e.head.id, m.lastID)
	}
	last := e.head
	if e.tail != nil {
		last = e.tail
	}
	m.started, m.lastID = true, last.id
	if m.open != nil && m.open.id == e.head.id {
		m.sp.merge(m.open.st, e.head.st)
		m.open.n += e.head.n
		m.pool.Put(e.head)
		if e.tail == nil {
			return nil
		}
		if err := m.closeRun(m.open); err != nil {
			return err
		}
	} else {
		if err := m.closeRun(m.open); err != nil {
			return err
		}
		if e.tail == nil {
			m.open = e.head
			return nil
		}
		if err := m.closeRun(e.head); err != nil {
			return err
		}
	}
	m.open = e.tail
	return nil
}

func outOfOrder(path string, row, id, prev int64) error {
	return stream.Errorf(path, 0, row, "", stream.ErrOrder, "set id %d follows set id %d: the rows of a set must be contiguous, with ids increasing (sort the rows by set id)", id, prev)
}

// eachSetPass streams one pass of src through sp with the given number of
// workers; every row is checked (width d, finite values, an increasing set
// id). It returns the numbers of rows and sets.
func eachSetPass[P any](ctx context.Context, src stream.DenseSource, d, workers int, sp *setPass[P]) (rows, sets int64, err error) {
	path := src.Info().Path
	m := &setMerger[P]{sp: sp, acc: workers, path: path, pending: map[int64]edges[P]{}}
	m.pool.New = func() any { return &run[P]{st: sp.newPiece()} }
	get := func(id, first int64) *run[P] {
		r := m.pool.Get().(*run[P])
		sp.reset(r.st)
		r.id, r.first, r.n = id, first, 0
		return r
	}
	counts := make([]int64, workers)    // batches seen per worker
	rowsW := make([]int64, workers)     // rows per worker
	setsW := make([]int64, workers)     // interior sets folded per worker
	scratch := make([]*run[P], workers) // reused for interior sets
	err = stream.Each(ctx, src.Rows, workers, func(w int, b *stream.Dense) error {
		idx := int64(w) + int64(workers)*counts[w]
		counts[w]++
		if err := checkSetBatch(path, b, d, sp.check); err != nil {
			return err
		}
		if b.Rows == 0 {
			return m.submit(idx, edges[P]{})
		}
		rowsW[w] += int64(b.Rows)
		sp.batch(w, b)
		var e edges[P]
		lo := 0
		for i := 1; i <= b.Rows; i++ {
			if i < b.Rows && b.Group[i] == b.Group[lo] {
				continue
			}
			first := b.Start + int64(lo)
			switch {
			case lo == 0:
				e.head = get(b.Group[lo], first)
				sp.add(w, e.head.st, b, lo, i)
				e.head.n = i - lo
			case i == b.Rows:
				e.tail = get(b.Group[lo], first)
				sp.add(w, e.tail.st, b, lo, i)
				e.tail.n = i - lo
			default: // an interior set is complete
				if scratch[w] == nil {
					scratch[w] = &run[P]{st: sp.newPiece()}
				}
				r := scratch[w]
				sp.reset(r.st)
				r.id, r.first, r.n = b.Group[lo], first, i-lo
				if r.n < 3 {
					return tooSmall(path, r)
				}
				sp.add(w, r.st, b, lo, i)
				sp.fold(w, r.st, r.n)
				setsW[w]++
			}
			lo = i
		}
		return m.submit(idx, e)
	})
	if err != nil {
		return 0, 0, err
	}
	if len(m.pending) > 0 {
		// stream.Each hands batch i to worker i mod workers; anything else
		// would leave batches unjoined.
		return 0, 0, fmt.Errorf("markov: %d batches were never joined (batch order broken)", len(m.pending))
	}
	if err := m.closeRun(m.open); err != nil {
		return 0, 0, err
	}
	sets = m.sets
	for w := range workers {
		rows += rowsW[w]
		sets += setsW[w]
	}
	return rows, sets, nil
}

// checkSetBatch validates a batch: width, finite values, one id per row, ids
// non-decreasing within the batch (across batches the merger checks), and the
// optional per-row check.
func checkSetBatch(path string, b *stream.Dense, d int, check func(*stream.Dense, int) error) error {
	if b.Cols != d {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d)
	}
	if b.Rows > 0 && len(b.Group) != b.Rows {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrSchema, "no set id column: every row needs the id of its set (Dense.Group)")
	}
	for i, v := range b.Data[:b.Rows*d] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d)
		}
	}
	for i := 1; i < b.Rows; i++ {
		if b.Group[i] < b.Group[i-1] {
			return outOfOrder(path, b.Start+int64(i), b.Group[i], b.Group[i-1])
		}
	}
	if check != nil {
		for i := range b.Rows {
			if err := check(b, i); err != nil {
				return err
			}
		}
	}
	return nil
}
