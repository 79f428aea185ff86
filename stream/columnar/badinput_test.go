package columnar

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/streamfit/streamfit/stream"
)

// A file forced to the wrong format says what it is not and what it looks
// like, instead of a decoder's complaint.
func TestWrongFormatNamed(t *testing.T) {
	dir := t.TempDir()
	docs := corpus(50, 30, 5, 13)
	pq := filepath.Join(dir, "c.parquet")
	writeDocs(t, pq, docs, stream.WriteOptions{})
	txt := filepath.Join(dir, "docword.c.txt")
	os.WriteFile(txt, []byte("1\n3\n1\n1 1 1\n"), 0o644)
	cases := []struct{ path, format, want string }{
		{pq, FormatArrow, "not an Arrow IPC file: it looks like a Parquet file (format parquet)"},
		{pq, FormatArrowStream, "not an Arrow IPC stream: it looks like a Parquet file"},
		{txt, FormatParquet, "not a Parquet file: its first bytes match no columnar format"},
	}
	for _, c := range cases {
		_, err := stream.Open(c.path, stream.Options{Format: c.format})
		if !errors.Is(err, stream.ErrFormat) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s as %s: %v; want ErrFormat with %q", c.path, c.format, err, c.want)
		}
	}
}

// Damage inside a Parquet column chunk is reported with its row group, and a
// truncated IPC stream with the record batch that could not be read.
func TestCorruptNamesPiece(t *testing.T) {
	dir := t.TempDir()
	docs := corpus(3000, 500, 30, 14)
	path := filepath.Join(dir, "c.parquet")
	writeDocs(t, path, docs, stream.WriteOptions{RowGroupRows: 1000})
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := r.MetaData().RowGroup(1).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	mid := cc.DataPageOffset() + cc.TotalCompressedSize()/2
	r.Close()
	data, _ := os.ReadFile(path)
	for i := mid; i < mid+64; i++ {
		data[i] ^= 0xa5
	}
	bad := filepath.Join(dir, "bad.parquet")
	os.WriteFile(bad, data, 0o644)
	src, err := stream.Open(bad, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Collect(context.Background(), src)
	if !errors.Is(err, stream.ErrCorrupt) || !strings.Contains(err.Error(), "row group 1") || !strings.Contains(err.Error(), bad) {
		t.Errorf("damaged row group 1: %v", err)
	}

	sp := filepath.Join(dir, "c.arrows")
	writeDocs(t, sp, docs, stream.WriteOptions{RowGroupRows: 1000})
	data, _ = os.ReadFile(sp)
	cut := filepath.Join(dir, "cut.arrows")
	os.WriteFile(cut, data[:len(data)*5/6], 0o644)
	if src, err = stream.Open(cut, stream.Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Collect(context.Background(), src)
	if !errors.Is(err, stream.ErrCorrupt) || !strings.Contains(err.Error(), "record batch 2") {
		t.Errorf("stream cut in record batch 2: %v", err)
	}
}

// Unsigned 32-bit term ids (Parquet INT32 with a UINT_32 logical type) of
// 2^31 or more are reported as too large, never read as negative ids, both
// from the levels (lists) and through Arrow (a long table).
func TestUnsignedTermIDs(t *testing.T) {
	u32 := arrow.PrimitiveTypes.Uint32
	lists := []arrow.Field{{Name: "terms", Type: arrow.ListOf(u32)}, {Name: "counts", Type: arrow.ListOf(u32)}}
	long := []arrow.Field{{Name: "doc", Type: i64}, {Name: "term", Type: u32}, {Name: "count", Type: u32}}
	cases := []struct {
		name   string
		rec    arrow.RecordBatch
		row    int64
		col    string
		layout string
	}{
		{"lists-term", record(t, lists, `[[1,2],[3000000000]]`, `[[1,1],[2]]`), 1, "terms", LayoutLists},
		{"lists-count", record(t, lists, `[[1,2],[3]]`, `[[1,4294967295],[2]]`), 0, "counts", LayoutLists},
		{"long-term", record(t, long, `[0,0,1]`, `[1,2147483648,3]`, `[1,1,1]`), 0, "term", LayoutLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "u.parquet")
			writeRecord(t, path, c.rec)
			src, err := stream.Open(path, stream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.layout == LayoutLists && src.(*docSource).t.plan == nil {
				t.Fatal("the lists layout was not read from the levels")
			}
			_, err = stream.Collect(context.Background(), src)
			checkErr(t, err, stream.ErrValue, path, c.row, c.col, "does not fit in 32 bits")
			if strings.Contains(err.Error(), "negative") {
				t.Fatalf("read as negative: %v", err)
			}
		})
	}
}

// In a long table a row with a null term only names an empty document: a
// non-integer count there is not looked at, and the rows after it are read.
func TestLongNullTermRowIgnoresCount(t *testing.T) {
	f := []arrow.Field{{Name: "doc", Type: i64}, {Name: "term", Type: i64, Nullable: true}, {Name: "count", Type: f64, Nullable: true}}
	path := filepath.Join(t.TempDir(), "l.arrow")
	writeRecord(t, path, record(t, f, `[0,1,2,2]`, `[3,null,1,4]`, `[2,"NaN",5,1.5]`))
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Collect(context.Background(), src)
	checkErr(t, err, stream.ErrValue, path, 2, "count", "non-integer count 1.5")

	writeRecord(t, path, record(t, f, `[0,1,2,2]`, `[3,null,1,4]`, `[2,"NaN",5,1]`))
	if src, err = stream.Open(path, stream.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	want := &stream.Docs{Offsets: []int{0}}
	want.AppendDoc([]int32{3}, []int32{2})
	want.AppendDoc(nil, nil)
	want.AppendDoc([]int32{1, 4}, []int32{5, 1})
	sameDocs(t, got, want)
}
