package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/gonum/floats"
)

// idDocs are documents over 40 words, document i drawn around topic i%2.
func idDocs(n int) [][]int32 {
	docs := make([][]int32, n)
	for i := range docs {
		base := int32(20 * (i % 2))
		for j := range 8 {
			docs[i] = append(docs[i], base+int32((i*7+j*3)%20))
		}
		slices.Sort(docs[i])
		docs[i] = slices.Compact(docs[i])
	}
	return docs
}

// writeIDTable writes docs with a string id column "name" (null where
// null[i]) as a lists table, or with layout "long" as (doc, term, count)
// rows whose doc column holds docID[i].
func writeIDTable(t *testing.T, path string, docs [][]int32, names []string, null map[int]bool, docID []int64, long bool) {
	t.Helper()
	mem := memory.NewGoAllocator()
	var sc *arrow.Schema
	if long {
		sc = arrow.NewSchema([]arrow.Field{
			{Name: "doc", Type: arrow.PrimitiveTypes.Int64},
			{Name: "term", Type: arrow.PrimitiveTypes.Int32},
			{Name: "count", Type: arrow.PrimitiveTypes.Int32},
		}, nil)
	} else {
		sc = arrow.NewSchema([]arrow.Field{
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "terms", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
			{Name: "counts", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		}, nil)
	}
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i, d := range docs {
		if long {
			for _, term := range d {
				b.Field(0).(*array.Int64Builder).Append(docID[i])
				b.Field(1).(*array.Int32Builder).Append(term)
				b.Field(2).(*array.Int32Builder).Append(1)
			}
			continue
		}
		if null[i] {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(names[i])
		}
		tl, cl := b.Field(1).(*array.ListBuilder), b.Field(2).(*array.ListBuilder)
		tl.Append(true)
		cl.Append(true)
		for _, term := range d {
			tl.ValueBuilder().(*array.Int32Builder).Append(term)
			cl.ValueBuilder().(*array.Int32Builder).Append(1)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeRecordParquet(t, path, rec)
}

// infer --id-column carries the input's ids into theta.parquet beside the
// shares, row for row: from one file, across the files of a dataset
// directory, and as the runs of a long table's doc column; a null id, a
// column of another type and a format without columns are refused.
func TestInferIDColumn(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	docs := idDocs(300)
	names := make([]string, len(docs))
	for i := range names {
		names[i] = "doc-" + strconv.Itoa(7*i)
	}
	writeIDTable(t, p("all.parquet"), docs, names, nil, nil, false)
	os.Mkdir(p("parts"), 0o755)
	writeIDTable(t, p("parts/a.parquet"), docs[:120], names[:120], nil, nil, false)
	writeIDTable(t, p("parts/b.parquet"), docs[120:], names[120:], nil, nil, false)
	docID := make([]int64, len(docs))
	for i := range docID {
		docID[i] = int64(1000 + 3*i)
	}
	writeIDTable(t, p("long.parquet"), docs, nil, nil, docID, true)

	mustRun(t, "fit", "lda", "--input", p("all.parquet"), "--k", "2", "--em-passes", "2", "--progress", "off", "--out", p("m.json"))
	theta := func(in, col string) (ids []string, shares []float64) {
		t.Helper()
		out := p(filepath.Base(in) + ".theta.parquet")
		mustRun(t, "infer", "--model", p("m.json"), "--input", in, "--id-column", col, "--batch-rows", "64", "--progress", "off", "--out", out)
		_, tbl := readParquetTable(t, out)
		if got := tbl.Schema().Field(1).Name; got != "id" {
			t.Fatalf("%s: second column %q, want id", out, got)
		}
		for _, ch := range tbl.Column(1).Data().Chunks() {
			for i := range ch.Len() {
				switch a := ch.(type) {
				case *array.String:
					ids = append(ids, a.Value(i))
				case *array.Int64:
					ids = append(ids, strconv.FormatInt(a.Value(i), 10))
				}
			}
		}
		for _, ch := range tbl.Column(2).Data().Chunks() {
			shares = append(shares, ch.(*array.List).ListValues().(*array.Float64).Float64Values()...)
		}
		return ids, shares
	}
	wholeIDs, wholeShares := theta(p("all.parquet"), "name")
	if !slices.Equal(wholeIDs, names) {
		t.Errorf("ids from one file: %v…, want %v…", wholeIDs[:3], names[:3])
	}
	partIDs, partShares := theta(p("parts"), "name")
	if !slices.Equal(partIDs, names) || !slices.Equal(partShares, wholeShares) {
		t.Errorf("a dataset's ids or shares differ from the whole file's")
	}
	longIDs, longShares := theta(p("long.parquet"), "doc")
	for i, id := range longIDs {
		if id != strconv.FormatInt(docID[i], 10) {
			t.Fatalf("long table, document %d: id %s, want %d", i, id, docID[i])
		}
	}
	if len(longIDs) != len(docs) || !slices.Equal(longShares, wholeShares) {
		t.Errorf("long table: %d ids; shares equal to the lists table's: %v", len(longIDs), slices.Equal(longShares, wholeShares))
	}

	writeIDTable(t, p("null.parquet"), docs, names, map[int]bool{77: true}, nil, false)
	mustRun(t, "convert", p("all.parquet"), p("docword.all.txt"), "--progress", "off")
	for _, c := range []struct {
		in, col string
		code    int
		want    string
	}{
		{p("null.parquet"), "name", 1, "row 77"},
		{p("all.parquet"), "terms", 1, "want integers or strings"},
		{p("all.parquet"), "nope", 1, `"nope"`},
		{p("long.parquet"), "term", 2, "doc column"},
		{p("docword.all.txt"), "name", 2, "Parquet or Arrow"},
	} {
		out := p("bad.theta.parquet")
		code, _, errs := streamfit(t, "infer", "--model", p("m.json"), "--input", c.in, "--id-column", c.col, "--out", out, "--progress", "off")
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s --id-column %s: exit %d, %q; want exit %d saying %q", filepath.Base(c.in), c.col, code, errs, c.code, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s --id-column %s: left %s", filepath.Base(c.in), c.col, out)
		}
	}
}

// Of a directory of text files, --id-column path names each document by
// its file, and the shares follow the files: two kinds of file, two
// dominant topics.
func TestInferIDPaths(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "docs")
	os.MkdirAll(filepath.Join(root, "cars"), 0o755)
	var want []string
	for i := range 40 {
		name := "cars/c" + strconv.Itoa(10+i) + ".txt"
		os.WriteFile(filepath.Join(root, name), []byte("engine motor wheel car road drive engine "+strconv.Itoa(i%5)), 0o644)
		want = append(want, name)
	}
	for i := range 40 {
		name := "f" + strconv.Itoa(10+i) + ".txt"
		os.WriteFile(filepath.Join(root, name), []byte("apple banana cherry fruit salad apple "+strconv.Itoa(i%5)), 0o644)
		want = append(want, name)
	}
	slices.Sort(want) // "cars/…" before "f…", as the directory is read
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "vocab", "build", "--min-count", "1", "--max-df", "1", "--out", p("vocab.txt"), root)
	mustRun(t, "fit", "lda", "--input", root, "--vocab", p("vocab.txt"), "--k", "2", "--progress", "off", "--out", p("m.json"))
	mustRun(t, "infer", "--model", p("m.json"), "--input", root, "--vocab", p("vocab.txt"), "--id-column", "path", "--progress", "off", "--out", p("theta.parquet"))
	_, tbl := readParquetTable(t, p("theta.parquet"))
	var ids []string
	var top []int
	for _, ch := range tbl.Column(1).Data().Chunks() {
		for i := range ch.Len() {
			ids = append(ids, ch.(*array.String).Value(i))
		}
	}
	for _, ch := range tbl.Column(2).Data().Chunks() {
		l := ch.(*array.List)
		vals := l.ListValues().(*array.Float64).Float64Values()
		for i := range l.Len() {
			lo, hi := l.ValueOffsets(i)
			top = append(top, floats.MaxIdx(vals[lo:hi]))
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %q…, want %q…", ids[:3], want[:3])
	}
	for i, id := range ids {
		if (top[i] == top[0]) != strings.HasPrefix(id, "cars/") {
			t.Errorf("%s: dominant topic %d, the first car's %d", id, top[i], top[0])
		}
	}
}
