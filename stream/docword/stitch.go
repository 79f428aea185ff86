package docword

import (
	"bufio"
	"context"
	"io"
	"slices"

	"github.com/streamfit/streamfit/stream"
)

// stitcher turns parsed parts, in file order, into batches of documents. The
// document being built stays open at the end of cur until a later id shows up,
// because the next part may continue it.
type stitcher struct {
	s     *Source
	ctx   context.Context
	yield *stream.SafeYield[*stream.Docs] // the consumer's, called inside stream.Safe
	cur   *stream.Docs
	docs  *stream.FreeList // the pass's batches
	last  int64            // id of the latest document started, 0 before the first
	open  bool             // document last is still being built in cur
	lines int64            // entry lines so far
	tmp   []int32
}

// next closes the open document and starts document last+1, handing cur to
// the consumer first if it is full.
func (st *stitcher) next() error {
	if st.open {
		st.cur.EndDoc()
		st.open = false
	}
	if st.cur.Len() >= st.s.opts.BatchRows {
		if err := st.flush(); err != nil {
			return err
		}
	}
	st.last++
	st.open = true
	return nil
}

// flush yields cur and starts a new batch after it.
func (st *stitcher) flush() error {
	if err := st.ctx.Err(); err != nil {
		return err
	}
	b := st.cur
	st.s.opts.Progress.Add(int64(b.Len()), 0)
	st.cur = st.docs.Get(b.Start + int64(b.Len()))
	// A batch without room for one as large as this one gets room for one
	// a quarter larger (see stream.Docs.Reserve).
	n := b.NNZ()
	st.cur.Reserve(n, n+n/4)
	if !st.yield.Yield(b, nil) {
		return errStopped
	}
	return nil
}

// maxReserve bounds the entries reserved from the header's word: 2M entries
// (16 MB), some five times a default batch of typical documents.
const maxReserve = 1 << 21

// firstBatch returns the pass's first batch with room for the entries the
// header's average document length predicts, and a quarter more: filled by
// appends from nothing, it would leave as much again in garbage.
func (s *Source) firstBatch(l *stream.FreeList) *stream.Docs {
	b := l.Get(0)
	if h := s.h; h.D > 0 {
		// Bounded: the header is not checked against the body yet.
		per := min((h.NNZ+h.D-1)/h.D, maxReserve)
		n := min(int64(s.opts.BatchRows)*per, h.NNZ, maxReserve)
		b.Reserve(int(n+n/4), 0)
	}
	return b
}

// add appends one parsed part and reports its first problem, if any.
func (st *stitcher) add(p *part) error {
	path := st.s.path
	for r, d := range p.docs {
		lo, hi := p.offs[r], p.offs[r+1]
		if r == 0 && d == st.last && st.open {
			if err := st.join(p, d, lo, hi); err != nil {
				return err
			}
			continue
		}
		if r == 0 && d <= st.last {
			return st.orderErr(p.ch.line, d, st.last)
		}
		for st.last < d {
			if err := st.next(); err != nil {
				return err
			}
		}
		st.cur.Terms = append(st.cur.Terms, p.terms[lo:hi]...)
		st.cur.Counts = append(st.cur.Counts, p.counts[lo:hi]...)
	}
	st.lines += p.lines
	if nnz := st.s.h.NNZ; st.lines > nnz {
		return stream.Errorf(path, st.s.h.lines+nnz+1, -1, "", stream.ErrValue, "more entries than NNZ=%d given by the header (line %d)", nnz, st.s.h.fieldLine(2))
	}
	if e := p.err; e != nil {
		if e.order {
			return st.orderErr(e.line, e.doc, e.prev)
		}
		return stream.Errorf(path, e.line, -1, "", e.kind, "%s", e.msg)
	}
	return nil
}

// join continues the open document with the first run of a part, checking
// that the two pieces share no term.
func (st *stitcher) join(p *part, d int64, lo, hi int) error {
	old := st.cur.Terms[st.cur.Offsets[len(st.cur.Offsets)-1]:]
	if hi > lo && len(old) > 0 {
		st.tmp = append(append(st.tmp[:0], old...), p.terms[lo:hi]...)
		slices.Sort(st.tmp)
		for i := 1; i < len(st.tmp); i++ {
			if t := st.tmp[i]; t == st.tmp[i-1] {
				return stream.Errorf(st.s.path, lineOf(p.ch, d, t, st.s.h.market), -1, "", stream.ErrValue, "word %d appears twice in document %d", int64(t)+1, d)
			}
		}
	}
	st.cur.Terms = append(st.cur.Terms, p.terms[lo:hi]...)
	st.cur.Counts = append(st.cur.Counts, p.counts[lo:hi]...)
	return nil
}

// finish closes the pass: the header's NNZ must match, and documents up to D
// that the file never mentions are empty.
func (st *stitcher) finish() error {
	h := st.s.h
	if st.lines != h.NNZ {
		return stream.Errorf(st.s.path, 3, -1, "", stream.ErrValue, "the header says NNZ=%d but the file has %d entries", h.NNZ, st.lines)
	}
	for st.last < h.D {
		if err := st.next(); err != nil {
			return err
		}
	}
	if st.open {
		st.cur.EndDoc()
		st.open = false
	}
	if st.cur.Len() > 0 {
		return st.flush()
	}
	st.cur.Release()
	return nil
}

// lineOf finds the line of a chunk holding term t of document d.
func lineOf(ch chunk, d int64, t int32, real bool) int64 {
	line := ch.line
	for data := ch.data; len(data) > 0; line++ {
		ln := data
		if i := slices.Index(data, '\n'); i >= 0 {
			ln, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		dd, w, c, ok := parseEntry(ln, real)
		if !ok && real {
			dd, w, c, ok = parseRealEntry(ln)
		}
		if ok && dd == d && w == int64(t)+1 && c > 0 {
			return line
		}
	}
	return ch.line
}

// orderErr explains document d showing up on line after document prev: either
// it was seen before (its entries are split) or the ids go backwards. Finding
// the earlier line takes another read of the file, which only errors pay for.
func (st *stitcher) orderErr(line, d, prev int64) error {
	at, err := st.s.firstLineOf(st.ctx, d, line)
	if err != nil {
		return err
	}
	if at > 0 {
		return stream.Errorf(st.s.path, line, -1, "", stream.ErrOrder, "document %d already had entries on line %d: the entries of a document must be contiguous", d, at)
	}
	return stream.Errorf(st.s.path, line, -1, "", stream.ErrOrder, "document %d comes after document %d (line %d): documents must be in ascending order of id", d, prev, line-1)
}

// firstLineOf returns the first line before line `before` whose document id is
// d, or 0 if there is none.
func (s *Source) firstLineOf(ctx context.Context, d, before int64) (int64, error) {
	f, err := stream.OpenFile(s.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec, closeDec, err := decompressor(f)
	if err != nil {
		return 0, err
	}
	defer closeDec()
	br := bufio.NewReaderSize(dec, 2*maxLine)
	for line := int64(1); line < before; line++ {
		if line%(1<<16) == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		b, err := br.ReadSlice('\n')
		if err != nil && (err != io.EOF || len(b) == 0) {
			return 0, nil
		}
		if line <= s.h.lines {
			continue
		}
		if v, _, ok := parseUint(b, skipBlanks(b, 0)); ok && v == d {
			return line, nil
		}
	}
	return 0, nil
}
