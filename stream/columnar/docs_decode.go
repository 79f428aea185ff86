package columnar

import (
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamfit/streamfit/stream"
)

// docDecoder turns list-shaped columns into CSR batches, checking every value.
// It is used by one goroutine at a time; its scratch memory is reused.
type docDecoder struct {
	path            string
	terms           int // vocabulary size d; 0 when unknown
	batchRows       int
	termCol, cntCol string
	// cut is the most rows of a batch of the run being decoded.
	cut int

	// seen finds a term given twice in a document; a term id at or past
	// limit (as uint32: negative ids too) is out of range.
	seen  stream.DupTerms
	limit uint32

	tscratch, cscratch []int32
	o64a, o64b         []int64

	// free is the free list of the pass being decoded (nil: the shared pool),
	// and room what a batch of the run being decoded needs.
	free *stream.FreeList
	room room
}

// newDocs returns an empty batch with room for the run being decoded.
func (d *docDecoder) newDocs(start int64) *stream.Docs {
	b := newDocs(d.free, start)
	b.Reserve(d.room.need, d.room.reserve)
	b.Offsets = slices.Grow(b.Offsets, d.cut)
	return b
}

// maxReserve bounds the entries reserved for one batch (2 × 256 MB).
const maxReserve = 1 << 26

// room is what a batch needs for a run of documents (need entries) and what
// it gets when it is (re)allocated (reserve entries).
type room struct{ need, reserve int }

// roomFor is the room of a batch of rows documents for the run recs (one
// list column col): it needs the run's entries and gets a quarter more than
// rows of the run's average document (than the run, for a run of less than
// a quarter of rows). A reused batch is reallocated only when
// a run does not fit it, so its size is set by its first use, not ratcheted
// up by append's growth with each slightly larger run (a longer pass sees
// more of them, and would end up holding more).
func roomFor(recs []arrow.RecordBatch, col string, rows int) room {
	var n, entries int64
	for _, rec := range recs {
		a := column(rec, col)
		if a == nil {
			return room{}
		}
		o32, o64, v := offsets(a)
		var e int64
		switch {
		case len(o32) > 0:
			e = int64(o32[len(o32)-1] - o32[0])
		case len(o64) > 0:
			e = o64[len(o64)-1] - o64[0]
		}
		if v != nil {
			// Offsets are checked later; a damaged file must not make a
			// batch larger than the values it holds.
			e = min(max(e, 0), int64(v.Len()))
		}
		entries += max(e, 0)
		n += rec.NumRows()
	}
	if n == 0 {
		return room{}
	}
	entries = min(entries, maxReserve)
	est := entries + entries/4
	if 4*n >= int64(rows) {
		// Enough rows for their average to stand for a whole batch; a few
		// long documents at the end of a record batch would not.
		est = int64(float64(entries) / float64(n) * float64(rows) * 1.25)
	}
	return room{need: int(entries), reserve: int(min(max(est, entries), maxReserve))}
}

func newDocDecoder(path string, terms, batchRows int, termCol, cntCol string) *docDecoder {
	return &docDecoder{path: path, terms: terms, batchRows: batchRows, termCol: termCol, cntCol: cntCol,
		seen: *stream.NewDupTerms(terms), limit: termLimit(terms)}
}

// termLimit is the first term id out of range, as uint32: the vocabulary
// size when known, else 2^31 (so that a negative id, as uint32, is past it).
func termLimit(terms int) uint32 {
	if terms > 0 {
		return uint32(terms)
	}
	return 1 << 31
}

func (d *docDecoder) errorf(row int64, col string, kind error, format string, args ...any) error {
	return stream.Errorf(d.path, 0, row, col, kind, format, args...)
}

// checkDoc checks one document's entries: term ids in range and distinct,
// counts non-negative.
func (d *docDecoder) checkDoc(row int64, t, c []int32) error {
	d.seen.Next()
	st, g := d.seen.Table()
	for j, x := range t {
		if uint32(x) < uint32(len(st)) {
			if st[x] == g {
				return d.errorf(row, d.termCol, stream.ErrValue, "term %d appears twice in the document", x)
			}
			st[x] = g
		} else if err := d.markBeyond(row, x); err != nil {
			return err
		} else {
			st, g = d.seen.Table()
		}
		if c[j] < 0 {
			return d.errorf(row, d.cntCol, stream.ErrValue, "negative count %d for term %d", c[j], x)
		}
	}
	return nil
}

// markBeyond checks a term id of the document at row that lies past the
// duplicate table and records it there: refused when negative or outside a
// known vocabulary, or when the document had it already (an id past the
// table's bound); else the table grows to it.
func (d *docDecoder) markBeyond(row int64, t int32) error {
	switch {
	case t < 0:
		return d.errorf(row, d.termCol, stream.ErrValue, "negative term id %d", t)
	case uint32(t) >= d.limit:
		return d.errorf(row, d.termCol, stream.ErrValue, "term id %d outside the vocabulary [0,%d)", t, d.terms)
	case d.seen.Add(int64(t)):
		return d.errorf(row, d.termCol, stream.ErrValue, "term %d appears twice in the document", t)
	}
	return nil
}

// appendDoc checks one document's entries and appends it to b.
func (d *docDecoder) appendDoc(b *stream.Docs, row int64, t, c []int32) error {
	if err := d.checkDoc(row, t, c); err != nil {
		return err
	}
	b.Terms = append(b.Terms, t...)
	b.Counts = append(b.Counts, c...)
	b.EndDoc()
	return nil
}

// checkLevels checks a run read from the Parquet levels (loaded.docs) and
// reports its first problem in row order.
func (d *docDecoder) checkLevels(l loaded) error {
	b := l.docs
	limit := int64(b.Len())
	var first error
	at := func(row int64, err error) {
		if row < limit {
			limit, first = row, err
		}
	}
	// A rejected entry first: a null element holds no value, so its row
	// also has one term id more than counts (or the reverse), which says
	// less.
	if e := l.tbad; e != nil {
		at(int64(e.row), d.errorf(int64(e.row), d.termCol, stream.ErrValue, "%s", e.msg))
	}
	if e := l.cbad; e != nil {
		at(int64(e.row), d.errorf(int64(e.row), d.cntCol, stream.ErrValue, "%s", e.msg))
	}
	if len(l.coff) != len(b.Offsets) {
		n := int64(min(len(l.coff), len(b.Offsets)) - 1)
		at(n, d.errorf(n, d.cntCol, stream.ErrCorrupt, "columns %q and %q hold different numbers of rows", d.termCol, d.cntCol))
	}
	for i := 1; i < min(len(l.coff), len(b.Offsets)); i++ {
		if b.Offsets[i] != l.coff[i] {
			row := int64(i - 1)
			at(row, d.errorf(row, d.cntCol, stream.ErrValue, "%d term ids but %d counts", b.Offsets[i]-b.Offsets[i-1], l.coff[i]-l.coff[i-1]))
			break
		}
	}
	for i := range int(limit) {
		t, c := b.Doc(i)
		if err := d.checkDoc(int64(i), t, c); err != nil {
			return err
		}
	}
	return first
}

// csr appends rows [0, n) of a list-shaped chunk whose document i holds
// terms[toff[i]:toff[i+1]] and counts[coff[i]:coff[i+1]]; null lists (tnull,
// cnull report them, nil when none) are empty documents. row0 is the row of
// the chunk's first document within the piece; out collects full batches.
func csr[O int32 | int64](d *docDecoder, out *[]*stream.Docs, row0 int64, n int, toff, coff []O, tnull, cnull func(int) bool, terms, counts []int32) error {
	if len(toff) != n+1 || len(coff) != n+1 {
		return d.errorf(row0, d.termCol, stream.ErrCorrupt, "list offsets do not match the row count")
	}
	b := (*out)[len(*out)-1]
	for i := range n {
		if b.Len() >= d.cut {
			b = d.newDocs(b.Start + int64(b.Len()))
			*out = append(*out, b)
		}
		row := row0 + int64(i)
		tn := tnull != nil && tnull(i)
		cn := cnull != nil && cnull(i)
		lo, hi := toff[i], toff[i+1]
		clo, chi := coff[i], coff[i+1]
		if tn {
			lo = hi
		}
		if cn {
			clo = chi
		}
		if hi-lo != chi-clo {
			return d.errorf(row, d.cntCol, stream.ErrValue, "%d term ids but %d counts", hi-lo, chi-clo)
		}
		if lo < 0 || lo > hi || int64(hi) > int64(len(terms)) || clo < 0 || int64(chi) > int64(len(counts)) {
			return d.errorf(row, d.termCol, stream.ErrCorrupt, "list offsets out of bounds")
		}
		if err := d.appendDoc(b, row, terms[lo:hi], counts[clo:chi]); err != nil {
			return err
		}
	}
	return nil
}

// rowOf finds the row whose list range holds value index at.
func rowOf[O int | int32 | int64](off []O, at int) int64 {
	return int64(sort.Search(len(off)-1, func(i int) bool { return int64(off[i+1]) > int64(at) }))
}

func rowAt(o32 []int32, o64 []int64, at int) int64 {
	if o32 != nil {
		return rowOf(o32, at)
	}
	return rowOf(o64, at)
}

func nullFunc(a arrow.Array) func(int) bool {
	if a.NullN() == 0 {
		return nil
	}
	return a.IsNull
}

// listsChunk decodes one record of the lists layout.
func (d *docDecoder) listsChunk(out *[]*stream.Docs, row0 int64, ta, ca arrow.Array) error {
	t32, t64, tv := offsets(ta)
	c32, c64, cv := offsets(ca)
	if tv == nil || cv == nil {
		return d.errorf(-1, d.termCol, stream.ErrSchema, "columns are not lists")
	}
	if i := firstNull(tv); i >= 0 {
		return d.errorf(row0+rowAt(t32, t64, i), d.termCol, stream.ErrValue, "null term id")
	}
	if i := firstNull(cv); i >= 0 {
		return d.errorf(row0+rowAt(c32, c64, i), d.cntCol, stream.ErrValue, "null count")
	}
	var bad *badValue
	var terms, counts []int32
	badAt := func(col string, off32 []int32, off64 []int64) error {
		return d.errorf(row0+rowAt(off32, off64, bad.at), col, stream.ErrValue, "%s", bad.msg)
	}
	if terms, d.tscratch, bad = ints(tv, d.tscratch); bad != nil {
		return badAt(d.termCol, t32, t64)
	}
	if counts, d.cscratch, bad = ints(cv, d.cscratch); bad != nil {
		return badAt(d.cntCol, c32, c64)
	}
	n := ta.Len()
	if t32 != nil && c32 != nil {
		return csr(d, out, row0, n, t32, c32, nullFunc(ta), nullFunc(ca), terms, counts)
	}
	if t64 == nil {
		d.o64a = to64(t32, d.o64a)
		t64 = d.o64a
	}
	if c64 == nil {
		d.o64b = to64(c32, d.o64b)
		c64 = d.o64b
	}
	return csr(d, out, row0, n, t64, c64, nullFunc(ta), nullFunc(ca), terms, counts)
}

// pairsChunk decodes one record of the pairs layout.
func (d *docDecoder) pairsChunk(out *[]*stream.Docs, row0 int64, la arrow.Array, termName, countName string) error {
	o32, o64, v := offsets(la)
	st, ok := v.(*array.Struct)
	if !ok {
		return d.errorf(-1, d.termCol, stream.ErrSchema, "column is not a list of structs")
	}
	at := func(i int) int64 { return row0 + rowAt(o32, o64, i) }
	stt := st.DataType().(*arrow.StructType)
	ti, _ := stt.FieldIdx(termName)
	ci, _ := stt.FieldIdx(countName)
	for _, a := range []arrow.Array{st, st.Field(ti), st.Field(ci)} {
		if i := firstNull(a); i >= 0 {
			return d.errorf(at(i), d.termCol, stream.ErrValue, "null (term, count) entry")
		}
	}
	var bad *badValue
	var terms, counts []int32
	if terms, d.tscratch, bad = ints(st.Field(ti), d.tscratch); bad != nil {
		return d.errorf(at(bad.at), d.termCol, stream.ErrValue, "%s: %s", termName, bad.msg)
	}
	if counts, d.cscratch, bad = ints(st.Field(ci), d.cscratch); bad != nil {
		return d.errorf(at(bad.at), d.termCol, stream.ErrValue, "%s: %s", countName, bad.msg)
	}
	nf := nullFunc(la)
	if o32 != nil {
		return csr(d, out, row0, la.Len(), o32, o32, nf, nil, terms, counts)
	}
	return csr(d, out, row0, la.Len(), o64, o64, nf, nil, terms, counts)
}

// vectorChunk decodes one record of the vector layout (Spark ML vectors):
// a sparse row's indices are its term ids and its values their counts; a
// dense row's values are the counts of term ids 0, 1, …, its zeros left
// out. Counts must be whole non-negative numbers, as a CountVectorizer's.
func (d *docDecoder) vectorChunk(out *[]*stream.Docs, row0 int64, va arrow.Array) error {
	st, ok := va.(*array.Struct)
	if !ok {
		return d.errorf(-1, d.termCol, stream.ErrSchema, "column is not a struct")
	}
	stt := st.DataType().(*arrow.StructType)
	ti, _ := stt.FieldIdx("type")
	si, _ := stt.FieldIdx("size")
	ii, _ := stt.FieldIdx("indices")
	vi, _ := stt.FieldIdx("values")
	typ, _, bad := ints(st.Field(ti), nil)
	if bad != nil {
		return d.errorf(row0+int64(bad.at), d.termCol, stream.ErrValue, "type: %s", bad.msg)
	}
	size, _, bad := ints(st.Field(si), nil)
	if bad != nil {
		return d.errorf(row0+int64(bad.at), d.termCol, stream.ErrValue, "size: %s", bad.msg)
	}
	i32, i64, iv := offsets(st.Field(ii))
	v32, v64, vv := offsets(st.Field(vi))
	if vv == nil || iv == nil {
		return d.errorf(-1, d.termCol, stream.ErrSchema, "indices and values are not lists")
	}
	var idx, vals []int32
	if idx, d.tscratch, bad = ints(iv, d.tscratch); bad != nil {
		return d.errorf(row0+rowAt(i32, i64, bad.at), d.termCol, stream.ErrValue, "indices: %s", bad.msg)
	}
	if vals, d.cscratch, bad = ints(vv, d.cscratch); bad != nil {
		return d.errorf(row0+rowAt(v32, v64, bad.at), d.termCol, stream.ErrValue, "values: %s (a count must be a whole non-negative number)", bad.msg)
	}
	span := func(o32 []int32, o64 []int64, i int) (int, int) {
		if o32 != nil {
			return int(o32[i]), int(o32[i+1])
		}
		return int(o64[i]), int(o64[i+1])
	}
	var dt, dc []int32
	b := (*out)[len(*out)-1]
	for i := range va.Len() {
		row := row0 + int64(i)
		if b.Len() >= d.cut {
			b = d.newDocs(b.Start + int64(b.Len()))
			*out = append(*out, b)
		}
		if st.IsNull(i) || st.Field(ti).IsNull(i) {
			return d.errorf(row, d.termCol, stream.ErrValue, "null vector")
		}
		vlo, vhi := span(v32, v64, i)
		if vlo < 0 || vlo > vhi || vhi > len(vals) {
			return d.errorf(row, d.termCol, stream.ErrCorrupt, "list offsets out of bounds")
		}
		if anyNull(vv, vlo, vhi) {
			return d.errorf(row, d.termCol, stream.ErrValue, "null count")
		}
		var t, c []int32
		switch typ[i] {
		case 0: // sparse
			ilo, ihi := span(i32, i64, i)
			if ilo < 0 || ilo > ihi || ihi > len(idx) {
				return d.errorf(row, d.termCol, stream.ErrCorrupt, "list offsets out of bounds")
			}
			if anyNull(iv, ilo, ihi) {
				return d.errorf(row, d.termCol, stream.ErrValue, "null term id")
			}
			if ihi-ilo != vhi-vlo {
				return d.errorf(row, d.termCol, stream.ErrValue, "sparse vector with %d indices and %d values", ihi-ilo, vhi-vlo)
			}
			t, c = idx[ilo:ihi], vals[vlo:vhi]
			// Its size is the vocabulary's, and bounds its indices.
			if st.Field(si).IsNull(i) {
				return d.errorf(row, d.termCol, stream.ErrValue, "sparse vector without a size")
			}
			if err := d.vectorSize(row, int(size[i])); err != nil {
				return err
			}
			for _, x := range t {
				if x >= size[i] {
					return d.errorf(row, d.termCol, stream.ErrValue, "sparse vector of size %d with index %d", size[i], x)
				}
			}
		case 1: // dense
			if err := d.vectorSize(row, vhi-vlo); err != nil {
				return err
			}
			dt, dc = dt[:0], dc[:0]
			for j, x := range vals[vlo:vhi] {
				if x != 0 {
					dt, dc = append(dt, int32(j)), append(dc, x)
				}
			}
			t, c = dt, dc
		default:
			return d.errorf(row, d.termCol, stream.ErrValue, "vector type %d is neither sparse (0) nor dense (1)", typ[i])
		}
		if err := d.appendDoc(b, row, t, c); err != nil {
			return err
		}
	}
	return nil
}

// vectorSize checks that a vector of row has the size of the vocabulary
// (when known): a vector of another size was made over another one.
func (d *docDecoder) vectorSize(row int64, n int) error {
	if d.terms > 0 && n != d.terms {
		return d.errorf(row, d.termCol, stream.ErrValue, "vector of size %d, but the vocabulary has %d words", n, d.terms)
	}
	return nil
}

// needColumn returns the column of rec with the given name, or an error
// saying the record batch lacks it.
func (d *docDecoder) needColumn(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	if a := column(rec, name); a != nil {
		return a, nil
	}
	return nil, d.errorf(-1, "", stream.ErrSchema, "record batch lacks column %q", name)
}

// anyNull reports whether a has a null among its values lo..hi−1.
func anyNull(a arrow.Array, lo, hi int) bool {
	if a.NullN() == 0 {
		return false
	}
	for i := lo; i < hi; i++ {
		if a.IsNull(i) {
			return true
		}
	}
	return false
}

// docsPart is the decoded documents of one piece, with Start relative to it.
type docsPart struct {
	batches []*stream.Docs
	rows    int64
}

// size is the memory the part's batches hold.
func (p docsPart) size() int64 {
	var n int64
	for _, b := range p.batches {
		n += docsBytes(b)
	}
	return n
}

// docsBytes is the memory of a batch's entries and offsets.
func docsBytes(b *stream.Docs) int64 {
	return int64(8*len(b.Terms) + 8*len(b.Offsets))
}

func (p docsPart) release() {
	for _, b := range p.batches {
		b.Release()
	}
}

// decodeDocs decodes a piece of the lists or pairs layout.
func (d *docDecoder) decodeDocs(ds docSchema, l loaded) (docsPart, error) {
	if l.docs != nil {
		if err := d.checkLevels(l); err != nil {
			l.docs.Release()
			return docsPart{}, err
		}
		return docsPart{batches: []*stream.Docs{l.docs}, rows: int64(l.docs.Len())}, nil
	}
	d.free = l.free
	defer func() { d.free = nil }() // the pooled decoder must not keep the pass's batches
	// A run is one batch: at least BatchRows rows, more when the piece is
	// cut by entries (stream.Options.RunRows).
	d.cut = max(d.batchRows, int(l.rows()))
	d.room = roomFor(l.recs, ds.cols[0], d.cut)
	part := docsPart{batches: []*stream.Docs{d.newDocs(0)}}
	for _, rec := range l.recs {
		var err error
		switch ds.layout {
		case LayoutLists:
			ta, ca := column(rec, ds.cols[0]), column(rec, ds.cols[1])
			if ta == nil || ca == nil {
				err = d.errorf(-1, "", stream.ErrSchema, "record batch lacks columns %q", ds.cols)
				break
			}
			err = d.listsChunk(&part.batches, part.rows, ta, ca)
		case LayoutPairs:
			var la arrow.Array
			if la, err = d.needColumn(rec, ds.cols[0]); err == nil {
				err = d.pairsChunk(&part.batches, part.rows, la, ds.term, ds.count)
			}
		case LayoutVector:
			var va arrow.Array
			if va, err = d.needColumn(rec, ds.cols[0]); err == nil {
				err = d.vectorChunk(&part.batches, part.rows, va)
			}
		default:
			err = fmt.Errorf("columnar: layout %s is not decoded by decodeDocs", ds.layout)
		}
		if err != nil {
			part.release()
			return docsPart{}, err
		}
		part.rows += rec.NumRows()
	}
	part.batches = slices.DeleteFunc(part.batches, func(b *stream.Docs) bool {
		if b.Len() == 0 {
			b.Release()
			return true
		}
		return false
	})
	return part, nil
}
