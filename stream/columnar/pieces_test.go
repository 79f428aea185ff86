package columnar

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/streamfit/streamfit/stream"
)

// A file written as one huge row group (record batch) is read in batches of
// at most BatchRows documents, and a stalled consumer stops the decoders
// after about the in-flight budget: the rest of the row group is not decoded
// ahead of it.
func TestHugeRowGroupReadInPieces(t *testing.T) {
	docs := corpus(20000, 500, 30, 11)
	eachTable(t, docs, []string{LayoutLists, LayoutPairs, LayoutLong}, stream.WriteOptions{Terms: 500, RowGroupRows: docs.Len()}, func(t *testing.T, k kind, layout, path string) {
		if k == kindParquet {
			if n := parquetRowGroups(t, path); n != 1 {
				t.Fatalf("%d row groups, want 1", n)
			}
		}
		prog := stream.NewProgress(0)
		src, err := stream.Open(path, stream.Options{BatchRows: 128, Workers: 2, InflightBytes: 64 << 10, Progress: prog})
		if err != nil {
			t.Fatal(err)
		}
		got := &stream.Docs{Offsets: []int{0}}
		first := true
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if b.Len() > 128 {
				t.Fatalf("batch of %d documents, BatchRows 128", b.Len())
			}
			if first && layout != LayoutLong {
				// Give the decoders time to run ahead as far as they may.
				time.Sleep(50 * time.Millisecond)
				if read, size := prog.Bytes(), src.Info().Bytes; read > size/4 {
					t.Fatalf("decoders read %d of %d bytes ahead of a stalled consumer", read, size)
				}
				first = false
			}
			for i := range b.Len() {
				got.AppendDoc(b.Doc(i))
			}
			b.Release()
		}
		sameDocs(t, got, docs)
	})
}

func parquetRowGroups(t *testing.T, path string) int {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.NumRowGroups()
}

// Dense batches hold at most BatchBytes of values: wide rows come fewer per
// batch, whatever the writer's row groups.
func TestDenseBatchesBoundedByBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	all := &stream.Dense{Rows: 600, Cols: 1000}
	for range all.Rows * all.Cols {
		all.Data = append(all.Data, r.NormFloat64())
	}
	for _, k := range []kind{kindParquet, kindArrow, kindStream} {
		t.Run(k.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d"+exts[k])
			w, err := stream.CreateDense(path, stream.WriteOptions{RowGroupRows: all.Rows})
			writeClose(t, w, err, all)
			const limit = 1 << 20 // 131 rows of 1000 values
			src, err := stream.OpenDense(path, stream.Options{BatchBytes: limit})
			if err != nil {
				t.Fatal(err)
			}
			got := &stream.Dense{Cols: all.Cols}
			for b, err := range src.Rows(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				if 8*len(b.Data) > limit || b.Rows == 0 {
					t.Fatalf("batch of %d rows × %d = %d bytes, limit %d", b.Rows, b.Cols, 8*len(b.Data), limit)
				}
				got.Data = append(got.Data, b.Data...)
				got.Rows += b.Rows
				b.Release()
			}
			if got.Rows != all.Rows || !slices.Equal(got.Data, all.Data) {
				t.Fatalf("read %d rows, want %d (or values differ)", got.Rows, all.Rows)
			}
		})
	}
}

// Writers close row groups and record batches by decoded size: each holds
// about RowGroupBytes (never more than that plus one document), and without
// a row count the defaults apply.
func TestRowGroupsBySize(t *testing.T) {
	docs := corpus(5000, 300, 40, 12)
	const limit = 100 << 10
	for _, k := range []kind{kindParquet, kindArrow} {
		t.Run(k.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c"+exts[k])
			writeDocs(t, path, docs, stream.WriteOptions{RowGroupBytes: limit})
			sizes := groupRows(t, path, k)
			var lo int
			for i, n := range sizes {
				part := &stream.Docs{Offsets: docs.Offsets[lo : lo+n+1], Terms: docs.Terms, Counts: docs.Counts}
				by := int64(8 * (part.Offsets[n] - part.Offsets[0] + n + 1))
				if by > limit+8*int64(2*40+1) || (i < len(sizes)-1 && by < limit) {
					t.Fatalf("row group %d: %d documents, %d bytes (limit %d)", i, n, by, limit)
				}
				lo += n
			}
			if lo != docs.Len() || len(sizes) < 5 {
				t.Fatalf("%d row groups holding %d documents", len(sizes), lo)
			}
			// The default holds the whole small corpus in one group.
			def := filepath.Join(t.TempDir(), "d"+exts[k])
			writeDocs(t, def, docs, stream.WriteOptions{})
			if n := len(groupRows(t, def, k)); n != 1 {
				t.Fatalf("default: %d row groups for %d documents", n, docs.Len())
			}
		})
	}
}

// groupRows lists the rows of each Parquet row group or Arrow record batch.
func groupRows(t *testing.T, path string, k kind) []int {
	t.Helper()
	var out []int
	if k == kindParquet {
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := range r.NumRowGroups() {
			out = append(out, int(r.MetaData().RowGroup(i).NumRows()))
		}
		return out
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(fmt.Errorf("batch %d: %w", i, err))
		}
		out = append(out, int(rec.NumRows()))
		rec.Release()
	}
	return out
}
