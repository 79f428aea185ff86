package columnar

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// sparkVector is Spark ML's VectorUDT as Spark writes it to Parquet.
var sparkVector = arrow.StructOf(
	arrow.Field{Name: "type", Type: arrow.PrimitiveTypes.Int8},
	arrow.Field{Name: "size", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	arrow.Field{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	arrow.Field{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
)

// writeSparkVectors writes docs as a "features" column of Spark ML
// vectors over d words (document i dense when dense(i), else sparse),
// beside a string id column, in row groups of rg rows; values[bad] (when
// bad ≥ 0) becomes 1.5.
func writeSparkVectors(t *testing.T, path string, docs *stream.Docs, d int, dense func(int) bool, rg int64, bad int) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "features", Type: sparkVector},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer b.Release()
	vb := b.Field(1).(*array.StructBuilder)
	typ := vb.FieldBuilder(0).(*array.Int8Builder)
	size := vb.FieldBuilder(1).(*array.Int32Builder)
	ind := vb.FieldBuilder(2).(*array.ListBuilder)
	val := vb.FieldBuilder(3).(*array.ListBuilder)
	for i := range docs.Len() {
		b.Field(0).(*array.StringBuilder).Append("d" + string(rune('a'+i%26)))
		vb.Append(true)
		size.Append(int32(d))
		terms, counts := docs.Doc(i)
		val.Append(true)
		vv := val.ValueBuilder().(*array.Float64Builder)
		if dense(i) {
			typ.Append(1)
			ind.AppendNull()
			row := make([]float64, d)
			for j, w := range terms {
				row[w] = float64(counts[j])
			}
			vv.AppendValues(row, nil)
			continue
		}
		typ.Append(0)
		ind.Append(true)
		for j, w := range terms {
			ind.ValueBuilder().(*array.Int32Builder).Append(w)
			c := float64(counts[j])
			if i == bad && j == 0 {
				c = 1.5
			}
			vv.Append(c)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rg)), pqarrow.DefaultWriterProps())
	writeClose(t, w, err, rec)
}

// countsOf is document i of docs as term → count.
func countsOf(docs *stream.Docs, i int) map[int32]int32 {
	terms, counts := docs.Doc(i)
	m := map[int32]int32{}
	for j, w := range terms {
		m[w] = counts[j]
	}
	return m
}

// A column of Spark ML vectors (CountVectorizer's output) reads as the
// documents it encodes, sparse and dense rows alike (a dense row's zeros
// left out), whatever the batch size.
func TestSparkVectors(t *testing.T) {
	docs, _ := fixtureDocs(false)
	dir := t.TempDir()
	path := filepath.Join(dir, "features.parquet")
	writeSparkVectors(t, path, docs, 60, func(i int) bool { return i%5 == 2 }, 70, -1)
	for _, rows := range []int{1, 13, 4096} {
		src, err := stream.Open(path, stream.Options{BatchRows: rows})
		if err != nil {
			t.Fatal(err)
		}
		if info := src.Info(); info.Layout != LayoutVector || info.Rows != int64(docs.Len()) {
			t.Fatalf("info %+v", info)
		}
		got, err := stream.Collect(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != docs.Len() {
			t.Fatalf("%d rows per batch: %d documents, want %d", rows, got.Len(), docs.Len())
		}
		for i := range docs.Len() {
			if g, w := countsOf(got, i), countsOf(docs, i); !maps.Equal(g, w) {
				t.Fatalf("%d rows per batch: document %d is %v, want %v", rows, i, g, w)
			}
		}
	}
	// A fractional count is refused, naming the row.
	badPath := filepath.Join(dir, "bad.parquet")
	writeSparkVectors(t, badPath, docs, 60, func(int) bool { return false }, 70, 31)
	src, err := stream.Open(badPath, stream.Options{})
	if err == nil {
		_, err = stream.Collect(context.Background(), src)
	}
	var se *stream.Error
	if !errors.As(err, &se) || se.Row != 31 || !strings.Contains(err.Error(), "whole") {
		t.Errorf("a count of 1.5: %v", err)
	}
}
