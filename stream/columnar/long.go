package columnar

import (
	"context"
	"iter"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamfit/streamfit/stream"
)

// nullTerm marks a long-layout row with a null term: the row names a document
// without adding an entry (how writers store empty documents).
const nullTerm = math.MinInt32

// longPart is one piece of a long table, normalised to flat slices. Rows from
// bad on are cut off; bad says what was wrong with the first of them.
type longPart struct {
	doc         []int64
	term, count []int32
	rows        int64
	bad         *badValue
	badCol      string
	badDoc      int64
	badDocKnown bool
}

// longRunRows is the number of table rows (entries) decoded as one run.
const longRunRows = 1 << 16

// size is the memory the part holds.
func (p longPart) size() int64 { return int64(16 * len(p.doc)) }

// decodeLong normalises a piece in a worker; the documents are assembled in
// order by the consumer, since a document may span pieces.
func decodeLong(ds docSchema, l loaded) (longPart, error) {
	var p longPart
	for _, rec := range l.recs {
		da, ta, ca := column(rec, ds.cols[0]), column(rec, ds.cols[1]), column(rec, ds.cols[2])
		n := int(rec.NumRows())
		fail := func(at int, col, msg string, docs []int64) {
			p.bad, p.badCol = &badValue{int(p.rows) + at, msg}, col
			if docs != nil {
				p.badDoc, p.badDocKnown = docs[at], true
			}
		}
		if i := firstNull(da); i >= 0 {
			fail(i, ds.cols[0], "null doc id", nil)
			n = i
		}
		docs, _ := int64s(da, nil)
		// On a bad value ints returns nil and the values converted before it
		// in its scratch, which is all that is kept.
		terms, tconv, bad := ints(ta, nil)
		if bad != nil {
			terms = tconv[:bad.at]
			if bad.at < n {
				fail(bad.at, ds.cols[1], bad.msg, docs)
				n = bad.at
			}
		}
		counts, cconv, bad := ints(ca, nil)
		if bad != nil && bad.at < n && ta.IsNull(bad.at) {
			// A row with a null term only names an empty document; what its
			// count holds does not matter.
			counts, bad = intsExcept(ca, ta.IsNull)
		} else if bad != nil {
			counts = cconv[:bad.at]
		}
		if bad != nil && bad.at < n {
			fail(bad.at, ds.cols[2], bad.msg, docs)
			n = bad.at
		}
		if ta.NullN() > 0 || ca.NullN() > 0 {
			terms = append([]int32(nil), terms[:n]...)
			for i := range n {
				if ta.IsNull(i) {
					terms[i] = nullTerm
				} else if ca.IsNull(i) {
					fail(i, ds.cols[2], "null count", docs)
					n = i
					break
				}
			}
		}
		p.doc = append(p.doc, docs[:n]...)
		p.term = append(p.term, terms[:n]...)
		p.count = append(p.count, counts[:n]...)
		if p.bad != nil {
			return p, nil
		}
		p.rows += int64(n)
	}
	return p, nil
}

// intsExcept is ints for an array whose values at rows where skip holds are
// not looked at (they read as 0); it returns the values up to the first bad
// one.
func intsExcept(a arrow.Array, skip func(int) bool) ([]int32, *badValue) {
	var out []int32
	for lo := 0; ; {
		s := array.NewSlice(a, int64(lo), int64(a.Len()))
		v, conv, bad := ints(s, nil)
		s.Release()
		if bad == nil {
			return append(out, v...), nil
		}
		out = append(out, conv[:bad.at]...)
		at := lo + bad.at
		if !skip(at) {
			return out, &badValue{at, bad.msg}
		}
		out = append(out, 0)
		lo = at + 1
	}
}

// long runs a pass over a long table, stitching documents across pieces.
func (s *docSource) long(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		d := s.decoders.Get().(*docDecoder)
		defer s.decoders.Put(d)
		tc, cc := s.ds.cols[1], s.ds.cols[2]
		var (
			free     = new(stream.FreeList)
			b        = free.Get(0)
			docIdx   = int64(-1) // index of the open document
			cur      int64       // its id
			tableRow int64
		)
		fail := func(err error) {
			b.Release()
			yield(nil, err)
		}
		// nextDoc closes the open document (yielding a full batch) and opens
		// the one of id at table row r; false ends the pass.
		nextDoc := func(r, id int64) bool {
			if docIdx >= 0 {
				if id < cur {
					fail(stream.Errorf(s.t.path, 0, docIdx+1, s.ds.cols[0], stream.ErrOrder,
						"table row %d has doc id %d after %d: rows must be sorted by doc id and a document's rows contiguous", r, id, cur))
					return false
				}
				b.EndDoc()
				if b.Len() >= s.o.BatchRows {
					s.o.Progress.Add(int64(b.Len()), 0)
					if !yield(b, nil) {
						return false
					}
					b = free.Get(docIdx + 1)
				}
			}
			docIdx++
			cur = id
			d.seen.Next()
			return true
		}
		decode := func(l loaded) (longPart, error) { return decodeLong(s.ds, l) }
		for p, err := range pass(ctx, s.t, s.o, s.ds.cols, fixedRows(longRunRows), nil, decode, longPart.size, nil) {
			if err != nil {
				fail(err)
				return
			}
			for j, id := range p.doc {
				if (docIdx < 0 || id != cur) && !nextDoc(tableRow+int64(j), id) {
					return
				}
				t, c := p.term[j], p.count[j]
				if t == nullTerm {
					continue
				}
				if st, g := d.seen.Table(); uint32(t) < uint32(len(st)) {
					if st[t] == g {
						fail(stream.Errorf(s.t.path, 0, docIdx, tc, stream.ErrValue, "table row %d: term %d appears twice in document %d", tableRow+int64(j), t, id))
						return
					}
					st[t] = g
				} else if err := d.markBeyond(docIdx, t); err != nil {
					fail(err)
					return
				}
				if c < 0 {
					fail(stream.Errorf(s.t.path, 0, docIdx, cc, stream.ErrValue, "table row %d: negative count %d", tableRow+int64(j), c))
					return
				}
				b.Terms = append(b.Terms, t)
				b.Counts = append(b.Counts, c)
			}
			if p.bad != nil {
				row := docIdx
				if !p.badDocKnown || docIdx < 0 || p.badDoc != cur {
					row++
				}
				fail(stream.Errorf(s.t.path, 0, row, p.badCol, stream.ErrValue, "table row %d: %s", tableRow+int64(p.bad.at), p.bad.msg))
				return
			}
			tableRow += p.rows
		}
		if docIdx >= 0 {
			b.EndDoc()
		}
		if b.Len() == 0 {
			b.Release()
			return
		}
		s.o.Progress.Add(int64(b.Len()), 0)
		yield(b, nil)
	}
}
