package columnar

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/streamfit/streamfit/stream"
)

// Parquet files in the shapes other writers produce, kept in
// testdata/other-writers. pyarrow is not installable here (no PyPI, no
// Debian package), so they are written with arrow-go's low-level column
// writer, choosing schemas, encodings and page layouts the way pyarrow,
// parquet-mr/Spark and older writers do: 3-level lists with nullable lists
// and elements, the legacy 2-level and 1-level (bare repeated) lists, a list
// of structs, INT64 counts, dictionary pages with a fallback to plain pages
// when the dictionary fills, data pages v1 and v2, many small pages per
// column chunk, several row groups, snappy/gzip/zstd/none, and large_list.
//
// Regenerate with
//
//	STREAMFIT_WRITE_FIXTURES=1 go test ./stream/columnar -run TestOtherWriterFixtures

const fixtureDir = "testdata/other-writers"

// fixtureDocs are the documents every fixture holds: term ids below 60,
// counts 1..9, with empty documents at rows ≡ 3 mod 17 and null lists (read
// as empty documents) at rows ≡ 5 mod 23 where the schema allows nulls.
func fixtureDocs(nullable bool) (docs *stream.Docs, null []bool) {
	r := rand.New(rand.NewPCG(21, 21))
	docs = &stream.Docs{Offsets: []int{0}}
	for i := range 300 {
		isNull := nullable && i%23 == 5
		null = append(null, isNull)
		if i%17 == 3 || isNull {
			docs.EndDoc()
			continue
		}
		for _, t := range r.Perm(60)[:1+r.IntN(12)] {
			docs.Add(int32(t), int32(1+r.IntN(9)))
		}
		docs.EndDoc()
	}
	return docs, null
}

// listShape is a way of writing a list column: its schema node and the
// levels of a null list, an empty list and an entry.
type listShape struct {
	node              func(name string, elem parquet.Type) schema.Node
	nullDef, emptyDef int16
	entryDef          int16
	nullable          bool
	nullElementDef    int16 // -1 when elements cannot be null
}

func prim(name string, rep parquet.Repetition, t parquet.Type) schema.Node {
	n, err := schema.NewPrimitiveNode(name, rep, t, -1, -1)
	if err != nil {
		panic(err)
	}
	return n
}

func group(name string, rep parquet.Repetition, fields schema.FieldList, logical schema.LogicalType) schema.Node {
	n, err := schema.NewGroupNodeLogical(name, rep, fields, logical, -1)
	if err != nil {
		panic(err)
	}
	return n
}

var (
	// pyarrow, parquet-cpp, arrow-rs: optional group (LIST) { repeated group list { optional element } }.
	threeLevel = listShape{
		node: func(name string, t parquet.Type) schema.Node {
			return group(name, parquet.Repetitions.Optional, schema.FieldList{
				group("list", parquet.Repetitions.Repeated, schema.FieldList{prim("element", parquet.Repetitions.Optional, t)}, nil),
			}, schema.NewListLogicalType())
		},
		nullDef: 0, emptyDef: 1, entryDef: 3, nullable: true, nullElementDef: 2,
	}
	// parquet-mr's legacy (Spark with writeLegacyFormat): optional group (LIST) { repeated array }.
	twoLevel = listShape{
		node: func(name string, t parquet.Type) schema.Node {
			return group(name, parquet.Repetitions.Optional, schema.FieldList{prim("array", parquet.Repetitions.Repeated, t)}, schema.NewListLogicalType())
		},
		nullDef: 0, emptyDef: 1, entryDef: 2, nullable: true, nullElementDef: -1,
	}
	// Older writers (parquetjs, Avro/Thrift-style): a bare repeated field.
	oneLevel = listShape{
		node:     func(name string, t parquet.Type) schema.Node { return prim(name, parquet.Repetitions.Repeated, t) },
		emptyDef: 0, entryDef: 1, nullElementDef: -1,
	}
)

// levels lays out the documents in a list shape: definition and repetition
// levels, and the row of each entry. A null element is written at entry
// nullAt (if ≥ 0).
func (s listShape) levels(docs *stream.Docs, null []bool, nullAt int) (def, rep []int16, rows []int) {
	e := 0
	for i := range docs.Len() {
		terms, _ := docs.Doc(i)
		switch {
		case null[i]:
			def, rep, rows = append(def, s.nullDef), append(rep, 0), append(rows, -1)
		case len(terms) == 0:
			def, rep, rows = append(def, s.emptyDef), append(rep, 0), append(rows, -1)
		}
		for j := range terms {
			d := s.entryDef
			if e == nullAt {
				d = s.nullElementDef
			}
			def, rep, rows = append(def, d), append(rep, int16(min(j, 1))), append(rows, e)
			e++
		}
	}
	return def, rep, rows
}

type fixture struct {
	name string
	// pages says what the terms column chunks must hold, checked from the
	// file so the fixture demonstrably covers it: "dict" a dictionary page,
	// "v1"/"v2" data page versions, "plain" plain-encoded data pages, "many"
	// more than one data page per chunk.
	pages  []string
	shape  listShape
	count  parquet.Type // physical type of the counts
	pairs  bool         // one list of struct<term, count> instead of two lists
	props  []parquet.WriterProperty
	groups int // row groups
	nullAt int // entry written as a null element, -1 for none
}

var fixtures = []fixture{
	{name: "pyarrow-v1-dict-snappy", pages: []string{"dict", "v1", "many"}, shape: threeLevel, count: parquet.Types.Int64, groups: 2, nullAt: -1,
		props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(256), parquet.WithDataPageVersion(parquet.DataPageV1)}},
	{name: "pyarrow-v2-zstd-dict-fallback", pages: []string{"dict", "v2", "plain", "many"}, shape: threeLevel, count: parquet.Types.Int32, groups: 3, nullAt: -1,
		props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageSize(32), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDictionaryPageSizeLimit(200)}},
	{name: "legacy-2level-plain-gzip", pages: []string{"v1", "plain", "many"}, shape: twoLevel, count: parquet.Types.Int32, groups: 1, nullAt: -1,
		props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Gzip), parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(300)}},
	{name: "legacy-1level-uncompressed", pages: []string{"v1", "plain"}, shape: oneLevel, count: parquet.Types.Double, groups: 2, nullAt: -1,
		props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
	{name: "pairs-struct-v1-dict", pages: []string{"dict", "v1", "many"}, shape: threeLevel, count: parquet.Types.Int64, pairs: true, groups: 2, nullAt: -1,
		props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(400)}},
	{name: "null-element", pages: []string{"dict", "many"}, shape: threeLevel, count: parquet.Types.Int32, groups: 1, nullAt: 100,
		props: []parquet.WriterProperty{parquet.WithDataPageSize(256), parquet.WithCompression(compress.Codecs.Lz4Raw)}},
}

// writeFixture writes f with the low-level column writers.
func writeFixture(t *testing.T, f fixture, path string) {
	docs, null := fixtureDocs(f.shape.nullable)
	var fields schema.FieldList
	if f.pairs {
		elem := group("element", parquet.Repetitions.Optional, schema.FieldList{
			prim("term", parquet.Repetitions.Required, parquet.Types.Int32),
			prim("count", parquet.Repetitions.Required, f.count),
		}, nil)
		fields = schema.FieldList{group("terms", parquet.Repetitions.Optional, schema.FieldList{
			group("list", parquet.Repetitions.Repeated, schema.FieldList{elem}, nil),
		}, schema.NewListLogicalType())}
	} else {
		fields = schema.FieldList{f.shape.node("terms", parquet.Types.Int32), f.shape.node("counts", f.count)}
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithCreatedBy("streamfit fixture (mimics other writers)"), parquet.WithBatchSize(64)}, f.props...)...)
	w := file.NewParquetWriter(out, root, file.WithWriterProps(props))
	per := (docs.Len() + f.groups - 1) / f.groups
	for lo := 0; lo < docs.Len(); lo += per {
		hi := min(lo+per, docs.Len())
		part := &stream.Docs{Offsets: docs.Offsets[lo : hi+1], Terms: docs.Terms, Counts: docs.Counts}
		def, rep, rows := f.shape.levels(part, null[lo:hi], f.nullAt-docs.Offsets[lo])
		base := docs.Offsets[lo]
		var terms []int32
		var counts []float64
		for i, e := range rows {
			if e >= 0 && def[i] == f.shape.entryDef {
				terms = append(terms, docs.Terms[base+e])
				counts = append(counts, float64(docs.Counts[base+e]))
			}
		}
		rg := w.AppendRowGroup()
		for c := range 2 {
			cw, err := rg.NextColumn()
			if err != nil {
				t.Fatal(err)
			}
			typ := parquet.Types.Int32
			if c == 1 {
				typ = f.count
			}
			switch typ {
			case parquet.Types.Int32:
				v := terms
				if c == 1 {
					v = make([]int32, len(counts))
					for i, x := range counts {
						v[i] = int32(x)
					}
				}
				_, err = cw.(*file.Int32ColumnChunkWriter).WriteBatch(v, def, rep)
			case parquet.Types.Int64:
				v := make([]int64, len(counts))
				for i, x := range counts {
					v[i] = int64(x)
				}
				_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(v, def, rep)
			case parquet.Types.Double:
				_, err = cw.(*file.Float64ColumnChunkWriter).WriteBatch(counts, def, rep)
			}
			if err == nil {
				err = cw.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := rg.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeLargeList writes the documents as large_list columns through pqarrow
// (the Arrow schema travels in the file, as pyarrow stores it).
func writeLargeList(t *testing.T, path string) {
	docs, null := fixtureDocs(true)
	lt := arrow.LargeListOf(arrow.PrimitiveTypes.Int32)
	sc := arrow.NewSchema([]arrow.Field{{Name: "terms", Type: lt, Nullable: true}, {Name: "counts", Type: lt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range docs.Len() {
		terms, counts := docs.Doc(i)
		for c, vals := range [][]int32{terms, counts} {
			lb := b.Field(c).(*array.LargeListBuilder)
			if null[i] {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).AppendValues(vals, nil)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(parquet.WithDataPageSize(512), parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	writeClose(t, w, err, rec)
}

func TestOtherWriterFixtures(t *testing.T) {
	if os.Getenv("STREAMFIT_WRITE_FIXTURES") != "" {
		os.MkdirAll(fixtureDir, 0o755)
		for _, f := range fixtures {
			writeFixture(t, f, filepath.Join(fixtureDir, f.name+".parquet"))
		}
		writeLargeList(t, filepath.Join(fixtureDir, "large-list-pqarrow.parquet"))
	}
	for _, f := range append(fixtures, fixture{name: "large-list-pqarrow", shape: threeLevel, nullAt: -1}) {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(fixtureDir, f.name+".parquet")
			want, _ := fixtureDocs(f.shape.nullable)
			src, err := stream.Open(path, stream.Options{BatchRows: 50, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			layout := LayoutLists
			if f.pairs {
				layout = LayoutPairs
			}
			if info := src.Info(); info.Layout != layout || info.Terms != 60 || info.Rows != 300 {
				t.Fatalf("info %+v", info)
			}
			if src.(*docSource).t.plan == nil {
				t.Fatal("not read from the levels")
			}
			checkPages(t, path, f.pages)
			got, err := stream.Collect(context.Background(), src)
			if f.nullAt >= 0 {
				row := int64(0)
				for int(want.Offsets[row+1]) <= f.nullAt {
					row++
				}
				checkErr(t, err, stream.ErrValue, path, row, "terms", "null entry")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sameDocs(t, got, want)
			// pqarrow's nested reader (the path for shapes the level reader
			// does not take) reads the same documents.
			src.(*docSource).t.plan = nil
			if got, err = stream.Collect(context.Background(), src); err != nil {
				t.Fatal(err)
			}
			sameDocs(t, got, want)
		})
	}
	var total int64
	ents, _ := os.ReadDir(fixtureDir)
	for _, e := range ents {
		info, _ := e.Info()
		total += info.Size()
	}
	if total > 100<<10 {
		t.Errorf("fixtures take %d bytes, keep them under 100 KB", total)
	}
}

// checkPages checks that the first leaf's column chunks hold the page kinds
// named (see fixture.pages).
func checkPages(t *testing.T, path string, want []string) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[string]bool{}
	for i := range r.NumRowGroups() {
		pr, err := r.RowGroup(i).GetColumnPageReader(0)
		if err != nil {
			t.Fatal(err)
		}
		data := 0
		for pr.Next() {
			switch p := pr.Page().(type) {
			case *file.DictionaryPage:
				seen["dict"] = true
			case *file.DataPageV1:
				seen["v1"], data = true, data+1
				seen["plain"] = seen["plain"] || p.Encoding().String() == "PLAIN"
			case *file.DataPageV2:
				seen["v2"], data = true, data+1
				seen["plain"] = seen["plain"] || p.Encoding().String() == "PLAIN"
			}
		}
		if err := pr.Err(); err != nil {
			t.Fatal(err)
		}
		seen["many"] = seen["many"] || data > 1
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s: no %q pages in the terms column (saw %v)", path, w, seen)
		}
	}
}
