package columnar

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeIDs writes an int32 column "id" holding ids, in record batches of
// three rows, as an Arrow IPC file (.arrow) or stream (.arrows).
func writeIDs(t *testing.T, path string, ids []int32) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type writer interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	var w writer
	if strings.HasSuffix(path, ".arrows") {
		w = ipc.NewWriter(f, ipc.WithSchema(sc))
	} else if w, err = ipc.NewFileWriter(f, ipc.WithSchema(sc)); err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(ids); lo += 3 {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
		b.Field(0).(*array.Int32Builder).AppendValues(ids[lo:min(lo+3, len(ids))], nil)
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// An id column reads in row order from Arrow IPC files and streams and
// across a dataset's files; with runs, each run of equal values once.
func TestIDColumn(t *testing.T) {
	dir := t.TempDir()
	ids := []int32{5, 5, 9, 9, 9, 2, 7, 7}
	for _, name := range []string{"a.arrow", "b.arrows"} {
		writeIDs(t, filepath.Join(dir, name), ids)
	}
	os.Mkdir(filepath.Join(dir, "parts"), 0o755)
	writeIDs(t, filepath.Join(dir, "parts", "1.arrow"), ids[:4])
	writeIDs(t, filepath.Join(dir, "parts", "2.arrow"), ids[4:])
	read := func(path string, runs bool) []int64 {
		t.Helper()
		c, err := OpenIDColumn(path, "id", runs)
		if err != nil {
			t.Fatal(err)
		}
		if c.String {
			t.Fatalf("%s: an int32 column read as strings", path)
		}
		var got []int64
		for v, err := range c.Values(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v.Ints...)
		}
		return got
	}
	all := []int64{5, 5, 9, 9, 9, 2, 7, 7}
	for _, p := range []string{"a.arrow", "b.arrows", "parts"} {
		if got := read(filepath.Join(dir, p), false); !slices.Equal(got, all) {
			t.Errorf("%s: %v, want %v", p, got, all)
		}
		// The run of 9s spans the two files of parts.
		if got, want := read(filepath.Join(dir, p), true), []int64{5, 9, 2, 7}; !slices.Equal(got, want) {
			t.Errorf("%s, runs: %v, want %v", p, got, want)
		}
	}
	if _, err := OpenIDColumn(filepath.Join(dir, "a.arrow"), "nope", false); err == nil || !strings.Contains(err.Error(), "a.arrow") {
		t.Errorf("missing column: %v", err)
	}
}
