package columnar

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

var exts = map[kind]string{kindParquet: ".parquet", kindArrow: ".arrow", kindStream: ".arrows"}

// corpus draws n documents over d terms with mean length mean; about one in
// ten is empty.
func corpus(n, d, mean int, seed uint64) *stream.Docs {
	r := rand.New(rand.NewPCG(seed, 1))
	b := &stream.Docs{Offsets: []int{0}}
	seen := make([]bool, d)
	for range n {
		k := 0
		if r.IntN(10) != 0 {
			k = min(d, 1+r.IntN(2*mean))
		}
		for len(b.Terms)-b.Offsets[len(b.Offsets)-1] < k {
			t := int32(r.IntN(d))
			if seen[t] {
				continue
			}
			seen[t] = true
			b.Add(t, int32(1+r.IntN(5)))
		}
		for _, t := range b.Terms[b.Offsets[len(b.Offsets)-1]:] {
			seen[t] = false
		}
		b.EndDoc()
	}
	return b
}

func vocab(d int) []string {
	v := make([]string, d)
	for i := range v {
		v[i] = fmt.Sprintf("w%d", i)
	}
	return v
}

// eachTable runs fn, as a subtest per columnar kind and layout, on a file of
// that kind holding docs written with o in that layout.
func eachTable(t *testing.T, docs *stream.Docs, layouts []string, o stream.WriteOptions, fn func(t *testing.T, k kind, layout, path string)) {
	for _, k := range []kind{kindParquet, kindArrow, kindStream} {
		for _, layout := range layouts {
			t.Run(k.String()+"/"+layout, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "c"+exts[k])
				o := o
				o.Layout = layout
				writeDocs(t, path, docs, o)
				fn(t, k, layout, path)
			})
		}
	}
}

func writeDocs(t testing.TB, path string, docs *stream.Docs, o stream.WriteOptions) {
	t.Helper()
	w, err := stream.Create(path, o)
	if err != nil {
		t.Fatal(err)
	}
	src := &stream.MemoryDocs{All: docs, BatchRows: 333}
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func sameDocs(t *testing.T, got, want *stream.Docs) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("got %d documents, want %d", got.Len(), want.Len())
	}
	for i := range want.Len() {
		gt, gc := got.Doc(i)
		wt, wc := want.Doc(i)
		if !slices.Equal(gt, wt) || !slices.Equal(gc, wc) {
			t.Fatalf("document %d: got %v %v, want %v %v", i, gt, gc, wt, wc)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	docs := corpus(2000, 300, 20, 1)
	// The last documents are empty, so the long layout must keep trailing ones.
	docs.EndDoc()
	docs.EndDoc()
	eachTable(t, docs, []string{LayoutLists, LayoutPairs, LayoutLong}, stream.WriteOptions{Vocab: vocab(300), RowGroupRows: 170}, func(t *testing.T, k kind, layout, path string) {
		src, err := stream.Open(path, stream.Options{BatchRows: 64, Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		info := src.Info()
		if info.Format != k.String() || info.Layout != layout || info.Terms != 300 || len(info.Vocab) != 300 || info.Vocab[7] != "w7" {
			t.Fatalf("info %+v", info)
		}
		for pass := range 2 {
			got, err := stream.Collect(context.Background(), src)
			if err != nil {
				t.Fatalf("pass %d: %v", pass, err)
			}
			sameDocs(t, got, docs)
		}
	})
}

func TestBatchesInOrder(t *testing.T) {
	docs := corpus(3000, 100, 5, 2)
	path := filepath.Join(t.TempDir(), "c.parquet")
	writeDocs(t, path, docs, stream.WriteOptions{RowGroupRows: 250})
	src, err := stream.Open(path, stream.Options{BatchRows: 100, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	var next int64
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Start != next || b.Len() > 100 {
			t.Fatalf("batch at %d of %d docs, want start %d", b.Start, b.Len(), next)
		}
		next += int64(b.Len())
		b.Release()
	}
	if next != 3000 {
		t.Fatalf("read %d docs", next)
	}
}

func TestTermsFromStatistics(t *testing.T) {
	docs := corpus(500, 77, 10, 3)
	path := filepath.Join(t.TempDir(), "c.parquet")
	writeDocs(t, path, docs, stream.WriteOptions{})
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hi int32
	for _, x := range docs.Terms {
		hi = max(hi, x)
	}
	if got := src.Info().Terms; got != int(hi)+1 {
		t.Fatalf("Terms = %d, want %d", got, hi+1)
	}
}

func TestDenseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	all := &stream.Dense{Rows: 1000, Cols: 7}
	for i := range all.Rows * all.Cols {
		_ = i
		all.Data = append(all.Data, r.NormFloat64())
	}
	for i := range all.Rows {
		all.Group = append(all.Group, int64(i/10))
	}
	for _, k := range []kind{kindParquet, kindArrow, kindStream} {
		for _, groups := range []bool{false, true} {
			t.Run(fmt.Sprint(k, groups), func(t *testing.T) {
				in := *all
				if !groups {
					in.Group = nil
				}
				path := filepath.Join(t.TempDir(), "d"+exts[k])
				w, err := stream.CreateDense(path, stream.WriteOptions{RowGroupRows: 300})
				if err != nil {
					t.Fatal(err)
				}
				for b := range (&stream.MemoryDense{All: &in, BatchRows: 128}).Rows(context.Background()) {
					if err := w.Write(b); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				src, err := stream.OpenDense(path, stream.Options{BatchRows: 100, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				if info := src.Info(); info.Cols != 7 || info.Layout != LayoutFixedList {
					t.Fatalf("info %+v", info)
				}
				got, err := stream.CollectDense(context.Background(), src)
				if err != nil {
					t.Fatal(err)
				}
				if got.Rows != in.Rows || !slices.Equal(got.Data, in.Data) || !slices.Equal(got.Group, in.Group) {
					t.Fatalf("dense round trip differs (rows %d, groups %d)", got.Rows, len(got.Group))
				}
			})
		}
	}
}

// writeRecord writes one record as a Parquet file or Arrow IPC file.
func writeRecord(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch filepath.Ext(path) {
	case ".parquet":
		w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		writeClose(t, w, err, rec)
	default:
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
		writeClose(t, w, err, rec)
	}
}

// writeClose writes x with the writer just made (w, err) and closes it,
// failing the test on any error.
func writeClose[T any, W interface {
	Write(T) error
	Close() error
}](t testing.TB, w W, err error, x T) {
	t.Helper()
	if err == nil {
		err = w.Write(x)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// record builds a record from JSON columns of the given types.
func record(t *testing.T, fields []arrow.Field, cols ...string) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema(fields, nil)
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		a, _, err := array.FromJSON(memory.DefaultAllocator, fields[i].Type, strings.NewReader(c))
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		arrs[i] = a
	}
	return array.NewRecordBatch(sc, arrs, int64(arrs[0].Len()))
}

var (
	listI32  = arrow.ListOf(arrow.PrimitiveTypes.Int32)
	listI64  = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	listF64  = arrow.ListOf(arrow.PrimitiveTypes.Float64)
	i64      = arrow.PrimitiveTypes.Int64
	f64      = arrow.PrimitiveTypes.Float64
	listsF   = []arrow.Field{{Name: "terms", Type: listI32, Nullable: true}, {Name: "counts", Type: listF64, Nullable: true}}
	longF    = []arrow.Field{{Name: "doc", Type: i64}, {Name: "term", Type: i64}, {Name: "count", Type: i64}}
	pairsF   = []arrow.Field{{Name: "terms", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "term", Type: i64}, arrow.Field{Name: "count", Type: f64}))}}
	stringsF = []arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String}}
)

func TestLayoutsFromOtherWriters(t *testing.T) {
	want := &stream.Docs{Offsets: []int{0}}
	want.AppendDoc([]int32{1, 4}, []int32{2, 1})
	want.AppendDoc(nil, nil)
	want.AppendDoc([]int32{3}, []int32{5})
	cases := []struct {
		name, layout string
		rec          func() arrow.RecordBatch
	}{
		{"lists-float-counts", LayoutLists, func() arrow.RecordBatch {
			return record(t, listsF, `[[1,4],null,[3]]`, `[[2,1],null,[5]]`)
		}},
		{"lists-int64", LayoutLists, func() arrow.RecordBatch {
			return record(t, []arrow.Field{{Name: "terms", Type: listI64}, {Name: "counts", Type: listI64}}, `[[1,4],[],[3]]`, `[[2,1],[],[5]]`)
		}},
		{"pairs", LayoutPairs, func() arrow.RecordBatch {
			return record(t, pairsF, `[[{"term":1,"count":2},{"term":4,"count":1}],[],[{"term":3,"count":5}]]`)
		}},
	}
	for _, c := range cases {
		for _, ext := range []string{".parquet", ".arrow"} {
			t.Run(c.name+ext, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "t"+ext)
				writeRecord(t, path, c.rec())
				src, err := stream.Open(path, stream.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if src.Info().Layout != c.layout {
					t.Fatalf("layout %q, want %q", src.Info().Layout, c.layout)
				}
				got, err := stream.Collect(context.Background(), src)
				if err != nil {
					t.Fatal(err)
				}
				sameDocs(t, got, want)
			})
		}
	}
	// A long table with doc ids that are not 0-based: each distinct id is a document.
	path := filepath.Join(t.TempDir(), "long.parquet")
	writeRecord(t, path, record(t, longF, `[10,10,12,15,15]`, `[1,4,3,0,2]`, `[2,1,5,1,1]`))
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 3 || got.NNZ() != 5 {
		t.Fatalf("long table: %d docs %d nnz", got.Len(), got.NNZ())
	}
}

func TestText(t *testing.T) {
	for _, ext := range []string{".parquet", ".arrow"} {
		path := filepath.Join(t.TempDir(), "t"+ext)
		writeRecord(t, path, record(t, stringsF, `["a cat", null, "the dog"]`))
		_, err := openDocs(path, map[string]kind{".parquet": kindParquet, ".arrow": kindArrow}[ext], stream.Options{})
		if !errors.Is(err, stream.ErrIsText) {
			t.Fatalf("OpenDocs on text: %v", err)
		}
		ts, err := stream.OpenText(path, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for b, err := range ts.Texts(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b.Text...)
		}
		if !reflect.DeepEqual(all, []string{"a cat", "", "the dog"}) {
			t.Fatalf("texts %q", all)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		rec      func() arrow.RecordBatch
		opts     stream.Options
		kind     error
		row      int64
		col, msg string
	}{
		{"negative count", func() arrow.RecordBatch { return record(t, listsF, `[[1],[2,3]]`, `[[1],[1,-2]]`) }, stream.Options{}, stream.ErrValue, 1, "counts", "negative"},
		{"NaN count", func() arrow.RecordBatch { return record(t, listsF, `[[1],[2,3]]`, `[[1],[1,"NaN"]]`) }, stream.Options{}, stream.ErrValue, 1, "counts", "NaN"},
		{"non-integer count", func() arrow.RecordBatch { return record(t, listsF, `[[1],[],[2]]`, `[[1],[],[1.5]]`) }, stream.Options{}, stream.ErrValue, 2, "counts", "non-integer"},
		{"term out of vocabulary", func() arrow.RecordBatch { return record(t, listsF, `[[1],[2,30]]`, `[[1],[1,1]]`) }, stream.Options{Terms: 10}, stream.ErrValue, 1, "terms", "outside the vocabulary"},
		{"negative term", func() arrow.RecordBatch { return record(t, listsF, `[[1],[-2]]`, `[[1],[1]]`) }, stream.Options{}, stream.ErrValue, 1, "terms", "negative term"},
		{"duplicate term", func() arrow.RecordBatch { return record(t, listsF, `[[1],[2,2]]`, `[[1],[1,1]]`) }, stream.Options{}, stream.ErrValue, 1, "terms", "twice"},
		{"length mismatch", func() arrow.RecordBatch { return record(t, listsF, `[[1],[2,3]]`, `[[1],[1]]`) }, stream.Options{}, stream.ErrValue, 1, "counts", "counts"},
		{"unsorted long", func() arrow.RecordBatch {
			return record(t, longF, `[0,0,1,2,1]`, `[1,2,1,1,3]`, `[1,1,1,1,1]`)
		}, stream.Options{}, stream.ErrOrder, 3, "doc", "table row 4"},
		{"long negative count", func() arrow.RecordBatch {
			return record(t, longF, `[0,0,1,2]`, `[1,2,1,1]`, `[1,1,1,-1]`)
		}, stream.Options{}, stream.ErrValue, 2, "count", "negative"},
		{"missing column", func() arrow.RecordBatch {
			return record(t, []arrow.Field{{Name: "terms", Type: listI32}}, `[[1]]`)
		}, stream.Options{}, stream.ErrSchema, -1, "counts", "columns present: terms"},
		{"wrong type", func() arrow.RecordBatch {
			return record(t, []arrow.Field{{Name: "terms", Type: arrow.BinaryTypes.String}}, `["x"]`)
		}, stream.Options{}, stream.ErrSchema, -1, "terms", "want list"},
		{"no document columns", func() arrow.RecordBatch {
			return record(t, []arrow.Field{{Name: "foo", Type: i64}}, `[1]`)
		}, stream.Options{}, stream.ErrSchema, -1, "", "columns present: foo int64"},
	}
	for _, c := range cases {
		for _, ext := range []string{".parquet", ".arrow"} {
			t.Run(c.name+ext, func(t *testing.T) {
				path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+ext)
				writeRecord(t, path, c.rec())
				src, err := stream.Open(path, c.opts)
				if err == nil {
					_, err = stream.Collect(context.Background(), src)
				}
				checkErr(t, err, c.kind, path, c.row, c.col, c.msg)
			})
		}
	}
}

func checkErr(t *testing.T, err, kind error, path string, row int64, col, msg string) {
	t.Helper()
	var se *stream.Error
	if !errors.Is(err, kind) || !errors.As(err, &se) {
		t.Fatalf("got %v, want %v", err, kind)
	}
	if se.Path != path || se.Row != row || se.Column != col || !strings.Contains(err.Error(), msg) {
		t.Fatalf("got %q (row %d column %q), want row %d column %q mentioning %q", err, se.Row, se.Column, row, col, msg)
	}
}

func TestDenseBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nan.parquet")
	writeRecord(t, path, record(t, []arrow.Field{{Name: "a", Type: f64}, {Name: "b", Type: f64}}, `[1,2,3]`, `[0,"Inf",1]`))
	src, err := stream.OpenDense(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if src.Info().Layout != LayoutColumns || src.Info().Cols != 2 {
		t.Fatalf("info %+v", src.Info())
	}
	_, err = stream.CollectDense(context.Background(), src)
	checkErr(t, err, stream.ErrValue, path, 1, "b", "not finite")

	path = filepath.Join(dir, "ragged.arrow")
	writeRecord(t, path, record(t, []arrow.Field{{Name: "v", Type: listF64}, {Name: "id", Type: i64}}, `[[1,2],[3,4],[5]]`, `[1,1,2]`))
	src, err = stream.OpenDense(path, stream.Options{GroupColumn: "id"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.CollectDense(context.Background(), src)
	checkErr(t, err, stream.ErrValue, path, 2, "v", "1 values")

	_, err = stream.OpenDense(path, stream.Options{GroupColumn: "sid"})
	checkErr(t, err, stream.ErrSchema, path, -1, "sid", "missing id column")
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	docs := corpus(3000, 500, 30, 5)
	for _, k := range []kind{kindParquet, kindArrow, kindStream} {
		path := filepath.Join(dir, "ok"+exts[k])
		writeDocs(t, path, docs, stream.WriteOptions{RowGroupRows: 1000})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		read := func(name string, b []byte) error {
			p := filepath.Join(dir, name+exts[k])
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := openDocs(p, k, stream.Options{Workers: 2})
			if err == nil {
				_, err = stream.Collect(context.Background(), src)
			}
			if err != nil && !strings.Contains(err.Error(), p) {
				t.Errorf("%s %s: error does not name the file: %v", k, name, err)
			}
			return err
		}
		for _, cut := range []int{len(data) / 2, len(data) - 10, 9} {
			if err := read(fmt.Sprint("cut", cut), data[:cut]); !errors.Is(err, stream.ErrCorrupt) {
				t.Errorf("%s truncated at %d: %v", k, cut, err)
			}
		}
		if err := read("empty", nil); !errors.Is(err, stream.ErrEmpty) {
			t.Errorf("%s empty: %v", k, err)
		}
		// Damage the data: any error is fine as long as nothing panics or hangs,
		// and a damaged footer is reported as corrupt.
		r := rand.New(rand.NewPCG(9, 9))
		for i := range 20 {
			bad := slices.Clone(data)
			for range 8 {
				bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
			}
			read(fmt.Sprint("flip", i), bad)
		}
	}
	path := filepath.Join(dir, "footer.parquet")
	writeDocs(t, path, docs, stream.WriteOptions{})
	data, _ := os.ReadFile(path)
	for i := len(data) - 60; i < len(data)-8; i++ {
		data[i] ^= 0x5a
	}
	os.WriteFile(path, data, 0o644)
	if _, err := stream.Open(path, stream.Options{}); !errors.Is(err, stream.ErrCorrupt) {
		t.Errorf("damaged footer: %v", err)
	}
}

func TestCancel(t *testing.T) {
	docs := corpus(20000, 1000, 20, 6)
	for _, k := range []kind{kindParquet, kindArrow, kindStream} {
		path := filepath.Join(t.TempDir(), "c"+exts[k])
		writeDocs(t, path, docs, stream.WriteOptions{RowGroupRows: 500})
		src, err := stream.Open(path, stream.Options{BatchRows: 100, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n int
		var last error
		for b, err := range src.Docs(ctx) {
			if err != nil {
				last = err
				break
			}
			b.Release()
			if n++; n == 3 {
				cancel()
			}
		}
		if !errors.Is(last, context.Canceled) {
			t.Errorf("%s: cancelled pass ended with %v after %d batches", k, last, n)
		}
		// Breaking out of the loop stops the pass too.
		for b := range src.Docs(context.Background()) {
			b.Release()
			break
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if g := runtime.NumGoroutine(); g > before {
			t.Errorf("%s: %d goroutines left, %d before", k, g, before)
		}
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		path string
		head []byte
		want string
	}{
		{"x.bin", []byte("PAR1xxxx"), FormatParquet},
		{"x.pq", nil, FormatParquet},
		{"x.feather", nil, FormatArrow},
		{"x.bin", []byte("ARROW1\x00\x00"), FormatArrow},
		{"x.bin", []byte{0xff, 0xff, 0xff, 0xff, 1}, FormatArrowStream},
		{"x.arrows", nil, FormatArrowStream},
	}
	for _, c := range cases {
		dir := t.TempDir()
		p := filepath.Join(dir, c.path)
		if c.head != nil {
			os.WriteFile(p, c.head, 0o644)
		}
		var f stream.Format
		var err error
		if c.head != nil {
			f, err = stream.Detect(p, "")
		} else {
			f, err = stream.DetectName(p, "")
		}
		if err != nil || f.Name != c.want {
			t.Errorf("%s %q: got %q %v, want %s", c.path, c.head, f.Name, err, c.want)
		}
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := stream.Create(filepath.Join(dir, "x.parquet"), stream.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(corpus(10, 10, 3, 1))
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}
