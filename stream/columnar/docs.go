package columnar

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// docSource is a stream.DocSource over a Parquet or Arrow document table.
type docSource struct {
	t    *table
	ds   docSchema
	o    stream.Options
	info stream.Info

	// decoders are reused across pieces and passes (one per busy worker).
	decoders sync.Pool
}

// maxInferredTerms bounds a vocabulary size inferred from the term ids'
// column statistics alone (the file names none): every table sized by the
// vocabulary would follow one damaged id.
const maxInferredTerms = 1 << 24

// openDocs opens path as documents. A table holding only raw text returns an
// error wrapping stream.ErrIsText so that stream.Open tokenizes it instead.
func openDocs(path string, k kind, o stream.Options) (stream.DocSource, error) {
	o = o.WithDefaults()
	t, err := openTable(path, k)
	if err != nil {
		return nil, err
	}
	ds, err := detectDocs(path, t.schema, o)
	if err != nil {
		return nil, err
	}
	if ds.layout == LayoutText {
		return nil, stream.Errorf(path, 0, -1, ds.cols[0], stream.ErrIsText, "column %q holds raw text", ds.cols[0])
	}
	s := &docSource{t: t, ds: ds, o: o, info: stream.Info{
		Path: path, Format: k.String(), Layout: ds.layout, Rows: -1, NNZ: -1,
		Bytes: t.size, Schema: schemaString(t.schema), Checksum: t.checksum(),
	}}
	if err := vocabInfo(path, t.schema, o, &s.info); err != nil {
		return nil, err
	}
	if ds.layout != LayoutLong {
		s.info.Rows = t.rows
	}
	if t.meta != nil && (ds.layout == LayoutLists || ds.layout == LayoutPairs) {
		if tp, cp, ok := planLeaves(t.meta, ds); ok {
			t.plan = &[2]leafPlan{tp, cp}
		}
	}
	if s.info.Terms == 0 && ds.layout == LayoutVector {
		// Spark ML vectors carry their vocabulary's size.
		n, err := vectorSize(path, k, ds.cols[0])
		if err != nil {
			return nil, corrupt(path, err)
		}
		s.info.Terms = n
	}
	if s.info.Terms == 0 && t.meta != nil {
		s.info.Terms = termsFromStats(t.meta, ds)
		if s.info.Terms > maxInferredTerms {
			// A vocabulary inferred from one stray id would size every
			// table after it: a damaged id must not exhaust the memory.
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrValue,
				"the largest term id is %d and the file names no vocabulary: a vocabulary of %d words is more than %d inferred from the ids alone; check the term ids, or give the vocabulary file (stream.Options.VocabPath)",
				s.info.Terms-1, s.info.Terms, maxInferredTerms)
		}
	}
	terms, rows := s.info.Terms, o.BatchRows
	tc, cc := ds.cols[0], ds.cols[0]
	switch ds.layout {
	case LayoutLists:
		cc = ds.cols[1]
	case LayoutLong:
		tc, cc = ds.cols[1], ds.cols[2]
	}
	s.decoders.New = func() any { return newDocDecoder(path, terms, rows, tc, cc) }
	return s, nil
}

// termsFromStats returns 1 + the largest term id recorded in the Parquet
// column statistics, or 0 when some row group has none.
func termsFromStats(md *metadata.FileMetaData, ds docSchema) int {
	col := -1
	for i := range md.Schema.NumColumns() {
		p := md.Schema.Column(i).ColumnPath()
		switch {
		case ds.layout == LayoutLists && p[0] == ds.cols[0],
			ds.layout == LayoutVector && len(p) > 1 && p[0] == ds.cols[0] && p[1] == "indices",
			ds.layout == LayoutPairs && p[0] == ds.cols[0] && p[len(p)-1] == ds.term,
			ds.layout == LayoutLong && len(p) == 1 && p[0] == ds.cols[1]:
			col = i
		}
	}
	if col < 0 || md.NumRowGroups() == 0 {
		return 0
	}
	var hi int64 = -1
	for rg := range md.NumRowGroups() {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil {
			return 0
		}
		if ok, err := cc.StatsSet(); !ok || err != nil {
			return 0
		}
		st, err := cc.Statistics()
		if err != nil || !st.HasMinMax() {
			if cc.NumValues() == 0 || (st != nil && st.NullCount() == cc.NumValues()) {
				continue // only empty documents in this row group
			}
			return 0
		}
		switch s := st.(type) {
		case *metadata.Int32Statistics:
			hi = max(hi, int64(s.Max()))
		case *metadata.Int64Statistics:
			hi = max(hi, s.Max())
		default:
			return 0
		}
	}
	if hi < 0 || hi >= 1<<31-1 {
		return 0
	}
	return int(hi + 1)
}

// Info describes the table.
func (s *docSource) Info() stream.Info { return s.info }

// Docs runs one pass over the documents.
func (s *docSource) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	if s.ds.layout == LayoutLong {
		return s.long(ctx)
	}
	return func(yield func(*stream.Docs, error) bool) {
		decode := func(l loaded) (docsPart, error) {
			d := s.decoders.Get().(*docDecoder)
			defer s.decoders.Put(d)
			return d.decodeDocs(s.ds, l)
		}
		var base int64
		// One batch per result (a run is decoded as one batch), so the
		// pass never has more out than its result slots and the consumer's.
		free := stream.NewFreeList(stream.ResultSlots(s.o.Workers) + 1)
		for part, err := range pass(ctx, s.t, s.o, s.ds.cols, s.o.RunRows, free, decode, docsPart.size, docsPart.release) {
			if err != nil {
				yield(nil, shift(err, base))
				return
			}
			for i, b := range part.batches {
				b.Start += base
				s.o.Progress.Add(int64(b.Len()), 0)
				if !yield(b, nil) {
					docsPart{batches: part.batches[i+1:]}.release()
					return
				}
			}
			base += part.rows
		}
	}
}

// shift moves the row of a decoding error, counted within its piece, to the
// source's document numbering.
func shift(err error, base int64) error {
	var se *stream.Error
	if errors.As(err, &se) && se.Row >= 0 {
		se.Row += base
	}
	return err
}

// vectorSize is the size of the Spark ML vectors in column col of the file
// (the vocabulary's): a sparse vector's size, a dense one's length, from
// the first vector of the file; 0 when the file holds none. Every vector
// of a pass is then checked to have that size.
func vectorSize(path string, k kind, col string) (int, error) {
	if k != kindParquet {
		for a, err := range columnArrays(context.Background(), path, k, col) {
			if err != nil {
				return 0, err
			}
			var n int
			var found bool
			err := guard(func() error { n, found = firstVectorSize(a); return nil })
			a.Release()
			if err != nil {
				return 0, corrupt(path, err)
			}
			if found {
				return n, nil
			}
		}
		return 0, nil
	}
	f, err := stream.OpenFile(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	err = guard(func() error {
		pr, err := openParquet(f)
		if err != nil {
			return err
		}
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 256}, memory.DefaultAllocator)
		if err != nil {
			return err
		}
		fields := leaves(fr, []string{col})
		if len(fields) == 0 {
			return nil
		}
		rr, err := fr.GetRecordReader(context.Background(), fields[0].leaves, nil)
		if err != nil {
			return err
		}
		defer rr.Release()
		return drain(context.Background(), rr, func(rec arrow.RecordBatch) bool {
			a := column(rec, col)
			if a == nil {
				return false
			}
			var found bool
			n, found = firstVectorSize(a)
			return !found
		})
	})
	return n, err
}

// firstVectorSize is the size of the first vector of a, a column of Spark
// ML vectors; found is false when a holds none with a size.
func firstVectorSize(a arrow.Array) (n int, found bool) {
	st, ok := a.(*array.Struct)
	if !ok {
		return 0, false
	}
	stt := st.DataType().(*arrow.StructType)
	ti, ok1 := stt.FieldIdx("type")
	si, ok2 := stt.FieldIdx("size")
	vi, ok3 := stt.FieldIdx("values")
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	typ, _, bad := ints(st.Field(ti), nil)
	size, _, bad2 := ints(st.Field(si), nil)
	v32, v64, _ := offsets(st.Field(vi))
	if bad != nil || bad2 != nil || v32 == nil && v64 == nil {
		return 0, false
	}
	// A damaged file's children may be shorter than the struct; the pass
	// that reads the vectors then says where.
	rows := st.Len()
	if len(typ) < rows || len(size) < rows || st.Field(ti).Len() < rows || st.Field(si).Len() < rows || max(len(v32), len(v64)) < rows+1 {
		return 0, false
	}
	for i := range st.Len() {
		if st.IsNull(i) || st.Field(ti).IsNull(i) {
			continue
		}
		switch typ[i] {
		case 0:
			if !st.Field(si).IsNull(i) && size[i] > 0 {
				return int(size[i]), true
			}
		case 1:
			if v32 != nil {
				return int(v32[i+1] - v32[i]), true
			}
			return int(v64[i+1] - v64[i]), true
		}
	}
	return 0, false
}
