package hmm

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"sync"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// DefaultBWMemory is the default budget (BWConfig.Memory) of the
// sequences Baum–Welch holds in memory after its first pass: 256 MiB, a
// byte per character of text for 268 million characters.
const DefaultBWMemory = 256 << 20

// seqBytes is what the memory form holds per sequence beyond its symbols:
// where its symbols begin, its id and its first source row.
const seqBytes = 24

// seqMemory holds the sequences of one-hot rows read by Baum–Welch's first
// pass as their symbols, so that the passes after it read memory, not the
// source: a symbol in width bytes per row (1 up to 256 symbols, 2 up to
// 65,536, else 4), and per sequence where its symbols begin, its id and
// its source row. Gaussian rows (dense) it holds whole, their d values
// (8·d bytes per row). What it holds, and the bytes it may grow to, stay
// within budget: past it, or at a row that is not one-hot (of symbols),
// it lets everything go and the passes read the source.
type seqMemory struct {
	d, width int
	dense    bool
	budget   int64
	sym      []byte
	vals     []float64 // dense: d values per row
	first    []int     // first[s]: the row of sequence s's first symbol in sym
	ids      []int64   // the sequence ids
	starts   []int64   // the source row of each sequence's first row
	failed   bool
}

// newSeqMemory returns an empty memory form of rows of d columns within
// budget bytes, or nil when the budget is not positive; dense holds
// Gaussian rows whole. rows, when the source knows it (> 0), sizes the
// symbols at once, if they fit, instead of doubling towards it.
func newSeqMemory(d int, budget, rows int64, dense bool) *seqMemory {
	if budget <= 0 {
		return nil
	}
	if dense {
		m := &seqMemory{d: d, width: 8 * d, dense: true, budget: budget}
		if rows > 0 && rows*int64(m.width) <= budget {
			m.vals = make([]float64, 0, rows*int64(d))
		}
		return m
	}
	w := 4
	switch {
	case d <= 1<<8:
		w = 1
	case d <= 1<<16:
		w = 2
	}
	m := &seqMemory{d: d, width: w, budget: budget}
	if rows > 0 && rows*int64(w) <= budget {
		m.sym = make([]byte, 0, rows*int64(w))
	}
	return m
}

// bytes is the memory the form holds, counting capacity.
func (m *seqMemory) bytes(symCap, seqCap int) int64 {
	return int64(symCap) + seqBytes*int64(seqCap)
}

// fail lets everything held go.
func (m *seqMemory) fail() {
	*m = seqMemory{d: m.d, width: m.width, dense: m.dense, budget: m.budget, failed: true}
}

// grow makes room for n more symbol bytes (dense: values) and s more
// sequences, doubling up to the budget; false when they do not fit.
func (m *seqMemory) grow(n, s int) bool {
	unit, have, had := 1, len(m.sym), cap(m.sym)
	if m.dense {
		unit, have, had = 8, len(m.vals), cap(m.vals)
	}
	symCap, seqCap := had, cap(m.ids)
	if have+n > symCap {
		symCap = max(have+n, 2*symCap, 4096/unit)
	}
	if len(m.ids)+s > seqCap {
		seqCap = max(len(m.ids)+s, 2*seqCap, 256)
	}
	if m.bytes(unit*symCap, seqCap) > m.budget {
		// Not doubled: only what is needed, if that fits.
		symCap, seqCap = max(had, have+n), max(cap(m.ids), len(m.ids)+s)
		if m.bytes(unit*symCap, seqCap) > m.budget {
			return false
		}
	}
	if symCap > had && m.dense {
		m.vals = append(make([]float64, 0, symCap), m.vals...)
	} else if symCap > had {
		m.sym = append(make([]byte, 0, symCap), m.sym...)
	}
	if seqCap > cap(m.ids) {
		m.first = append(make([]int, 0, seqCap), m.first...)
		m.ids = append(make([]int64, 0, seqCap), m.ids...)
		m.starts = append(make([]int64, 0, seqCap), m.starts...)
	}
	return true
}

// add keeps the rows of b, which the pass reads after the rows before.
func (m *seqMemory) add(b *stream.Dense) {
	if m.failed || b == nil || b.Rows == 0 {
		return
	}
	if len(b.Group) != b.Rows || b.Cols != m.d {
		m.fail() // the pass reports it
		return
	}
	newSeqs := 0
	for i := range b.Rows {
		if len(m.ids)+newSeqs == 0 || (i == 0 && b.Group[0] != m.ids[len(m.ids)-1]) || (i > 0 && b.Group[i] != b.Group[i-1]) {
			newSeqs++
		}
	}
	n := b.Rows * m.width
	if m.dense {
		n = b.Rows * m.d
	}
	if !m.grow(n, newSeqs) {
		m.fail()
		return
	}
	for i := range b.Rows {
		if id := b.Group[i]; len(m.ids) == 0 || id != m.ids[len(m.ids)-1] {
			m.first = append(m.first, m.rows())
			m.ids = append(m.ids, id)
			m.starts = append(m.starts, b.Start+int64(i))
		}
		if m.dense {
			m.vals = append(m.vals, b.Row(i)...)
			continue
		}
		s := -1
		for u, v := range b.Row(i) {
			switch {
			case v == 0:
			case v == 1 && s < 0:
				s = u
			default:
				m.fail() // not a one-hot row: the passes read its values
				return
			}
		}
		if s < 0 {
			m.fail()
			return
		}
		switch m.width {
		case 1:
			m.sym = append(m.sym, byte(s))
		case 2:
			m.sym = binary.LittleEndian.AppendUint16(m.sym, uint16(s))
		default:
			m.sym = binary.LittleEndian.AppendUint32(m.sym, uint32(s))
		}
	}
}

// rows is the number of rows held.
func (m *seqMemory) rows() int {
	if m.dense {
		return len(m.vals) / m.d
	}
	return len(m.sym) / m.width
}

// symbol returns the symbol of row r.
func (m *seqMemory) symbol(r int) int32 {
	switch m.width {
	case 1:
		return int32(m.sym[r])
	case 2:
		return int32(binary.LittleEndian.Uint16(m.sym[2*r:]))
	}
	return int32(binary.LittleEndian.Uint32(m.sym[4*r:]))
}

// tap returns rows with every batch also handed to m.add.
func (m *seqMemory) tap(rows func(context.Context) iter.Seq2[*stream.Dense, error]) func(context.Context) iter.Seq2[*stream.Dense, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Dense, error] {
		return func(yield func(*stream.Dense, error) bool) {
			for b, err := range rows(ctx) {
				if err == nil {
					m.add(b)
				}
				if !yield(b, err) {
					return
				}
			}
		}
	}
}

// memChunk is the number of sequences a worker of an in-memory pass takes
// at once.
const memChunk = 64

// run computes the statistics of pass p (bwPass, whose forward–backward
// scratch newFB makes) over the sequences held, on workers goroutines. A sequence's partial sums are those a streamed
// pass makes of its rows (the same forwardBackward.flush, from the same
// nonzeros), and the totals are exact (implicit.WideSums), so the
// statistics are the streamed pass's bit for bit, whatever workers. An
// error is the one of the first sequence, in order, that fails.
func (m *seqMemory) run(ctx context.Context, p *implicit.Pass, newFB func() *forwardBackward, workers int) (*implicit.DenseStats, error) {
	n := len(m.ids)
	chunks := (n + memChunk - 1) / memChunk
	workers = max(1, min(workers, chunks))
	acc := make([]*implicit.DenseStats, workers)
	errAt, errs := make([]int, workers), make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		acc[w] = p.New()
		errAt[w] = n
		wg.Go(func() {
			f := newFB()
			out := make([][]float64, len(p.Sums))
			for i, sh := range p.Sums {
				out[i] = make([]float64, sh.Len)
			}
			for c := w; c < chunks; c += workers {
				if err := ctx.Err(); err != nil {
					errAt[w], errs[w] = c*memChunk, err
					return
				}
				for s := c * memChunk; s < min(n, (c+1)*memChunk); s++ {
					if err := m.sequence(f, s, acc[w], out); err != nil {
						errAt[w], errs[w] = s, err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	first := -1
	for w := range workers {
		if errs[w] != nil && (first < 0 || errAt[w] < errAt[first]) {
			first = w
		}
	}
	if first >= 0 {
		return nil, errs[first]
	}
	for w := 1; w < workers; w++ {
		for i, t := range acc[0].Sums {
			if err := t.Merge(acc[w].Sums[i]); err != nil {
				return nil, err
			}
		}
	}
	acc[0].Rows = int64(m.rows())
	return acc[0], nil
}

// sequence adds the sums of sequence s, by f, to a (out is scratch).
func (m *seqMemory) sequence(f *forwardBackward, s int, a *implicit.DenseStats, out [][]float64) error {
	lo, hi := m.first[s], m.rows()
	if s+1 < len(m.first) {
		hi = m.first[s+1]
	}
	f.id, f.start = m.ids[s], m.starts[s]
	f.idx, f.val, f.end = f.idx[:0], f.val[:0], f.end[:0]
	if m.dense {
		f.rows = append(f.rows[:0], m.vals[lo*m.d:hi*m.d]...)
	}
	for r := lo; r < hi; r++ {
		if !m.dense {
			f.idx, f.val = append(f.idx, m.symbol(r)), append(f.val, 1)
		}
		f.end = append(f.end, r-lo+1)
	}
	for _, o := range out {
		clear(o)
	}
	return f.flush(out, func() error {
		for i, t := range a.Sums {
			if err := t.Add(out[i]); err != nil {
				return fmt.Errorf("%s: sequence %d: %w", t.Name, m.ids[s], err)
			}
			clear(out[i])
		}
		return nil
	})
}
