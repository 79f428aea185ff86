package columnar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// Damaged files of other writers. The Parquet fixtures in
// testdata/other-writers mimic other writers' page layouts; the files below
// are written by arrow-go's own writers (pqarrow, ipc) with the settings
// other tools choose and streamfit's writer does not: dictionary pages,
// data pages v2, page CRCs, snappy/gzip/zstd/brotli/lz4, nullable lists
// holding nulls, many small pages and row groups, the long, pairs, vector
// and text layouts, dense tables, compressed IPC bodies, dictionary-encoded
// IPC columns and streams. Every one is then damaged: the reader must end with an error
// naming the file, never a panic or a crash.

// otherRecord builds a record of n rows of the layout named.
func otherRecord(layout string, n int, seed uint64) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 7))
	mem := memory.DefaultAllocator
	var fields []arrow.Field
	switch layout {
	case "lists":
		fields = []arrow.Field{{Name: "terms", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true}, {Name: "counts", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}}
	case "large":
		fields = []arrow.Field{{Name: "terms", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int64), Nullable: true}, {Name: "counts", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float64), Nullable: true}}
	case "pairs":
		fields = []arrow.Field{{Name: "terms", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "term", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Float32})), Nullable: true}}
	case "long":
		fields = []arrow.Field{{Name: "doc", Type: arrow.PrimitiveTypes.Int64}, {Name: "term", Type: arrow.PrimitiveTypes.Int32}, {Name: "count", Type: arrow.PrimitiveTypes.Int16}}
	case "vector":
		fields = []arrow.Field{{Name: "features", Type: sparkVector}}
	case "text":
		fields = []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "text", Type: arrow.BinaryTypes.String}}
	case "dict-text":
		fields = []arrow.Field{{Name: "text", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}}}
	case "dense":
		fields = []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "values", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float64)}}
	case "columns":
		fields = []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float32}, {Name: "b", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "c", Type: arrow.PrimitiveTypes.Float64}}
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	doc := func() (terms []int, counts []int) {
		for _, t := range r.Perm(50)[:r.IntN(8)] {
			terms, counts = append(terms, t), append(counts, 1+r.IntN(6))
		}
		return
	}
	row := 0
	for i := range n {
		terms, counts := doc()
		null := i%11 == 4
		switch layout {
		case "lists":
			tl, cl := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.ListBuilder)
			if null {
				tl.AppendNull()
				cl.AppendNull()
				continue
			}
			tl.Append(true)
			cl.Append(true)
			for j := range terms {
				tl.ValueBuilder().(*array.Int32Builder).Append(int32(terms[j]))
				cl.ValueBuilder().(*array.Int64Builder).Append(int64(counts[j]))
			}
		case "large":
			tl, cl := b.Field(0).(*array.LargeListBuilder), b.Field(1).(*array.LargeListBuilder)
			tl.Append(true)
			cl.Append(true)
			for j := range terms {
				tl.ValueBuilder().(*array.Int64Builder).Append(int64(terms[j]))
				cl.ValueBuilder().(*array.Float64Builder).Append(float64(counts[j]))
			}
		case "pairs":
			lb := b.Field(0).(*array.ListBuilder)
			if null {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			for j := range terms {
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(terms[j]))
				sb.FieldBuilder(1).(*array.Float32Builder).Append(float32(counts[j]))
			}
		case "long":
			for j := range terms {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
				b.Field(1).(*array.Int32Builder).Append(int32(terms[j]))
				b.Field(2).(*array.Int16Builder).Append(int16(counts[j]))
				row++
			}
		case "vector":
			vb := b.Field(0).(*array.StructBuilder)
			vb.Append(true)
			vb.FieldBuilder(0).(*array.Int8Builder).Append(0)
			vb.FieldBuilder(1).(*array.Int32Builder).Append(50)
			ind, val := vb.FieldBuilder(2).(*array.ListBuilder), vb.FieldBuilder(3).(*array.ListBuilder)
			ind.Append(true)
			val.Append(true)
			slices.Sort(terms)
			for j := range terms {
				ind.ValueBuilder().(*array.Int32Builder).Append(int32(terms[j]))
				val.ValueBuilder().(*array.Float64Builder).Append(float64(counts[j]))
			}
		case "text", "dict-text":
			var words []string
			for _, t := range terms {
				words = append(words, fmt.Sprintf("w%d", t%7))
			}
			if layout == "text" {
				b.Field(0).(*array.Int32Builder).Append(int32(i))
				b.Field(1).(*array.StringBuilder).Append(strings.Join(words, " "))
			} else {
				b.Field(0).(*array.BinaryDictionaryBuilder).AppendString(strings.Join(words, " "))
			}
		case "dense":
			b.Field(0).(*array.Int64Builder).Append(int64(i % 3))
			lb := b.Field(1).(*array.FixedSizeListBuilder)
			lb.Append(true)
			for range 4 {
				lb.ValueBuilder().(*array.Float64Builder).Append(r.NormFloat64())
			}
		case "columns":
			b.Field(0).(*array.Float32Builder).Append(float32(r.NormFloat64()))
			b.Field(1).(*array.Float64Builder).Append(r.NormFloat64())
			b.Field(2).(*array.Float64Builder).Append(float64(i))
		}
	}
	return b.NewRecordBatch()
}

// otherParquet is a Parquet file written by pqarrow with the given layout
// and writer settings.
type otherParquet struct {
	name, layout string
	rows         int
	props        []parquet.WriterProperty
	store        bool // store the Arrow schema in the footer, as pyarrow does
}

var otherParquets = []otherParquet{
	{"lists-v1-dict-snappy", "lists", 300, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(256), parquet.WithMaxRowGroupLength(120)}, true},
	{"lists-v2-zstd-plain", "lists", 300, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(200)}, false},
	{"large-gzip", "large", 200, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Gzip), parquet.WithDataPageSize(512)}, true},
	{"pairs-brotli-v2", "pairs", 250, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Brotli), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithMaxRowGroupLength(100)}, true},
	{"long-dict-lz4raw", "long", 150, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Lz4Raw), parquet.WithDataPageSize(300), parquet.WithMaxRowGroupLength(200)}, false},
	{"long-v2-zstd", "long", 150, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(400)}, true},
	{"vector-snappy", "vector", 200, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(300)}, true},
	{"text-dict-zstd", "text", 200, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageSize(300)}, true},
	{"dense-fixed-v2", "dense", 200, []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(64)}, true},
	{"columns-snappy", "columns", 200, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(256)}, false},
}

func (o otherParquet) bytes(tb testing.TB) []byte {
	rec := otherRecord(o.layout, o.rows, uint64(len(o.name)))
	defer rec.Release()
	var buf bytes.Buffer
	ap := pqarrow.DefaultWriterProps()
	if o.store {
		ap = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	}
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithCreatedBy("another writer")}, o.props...)...)
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, ap)
	writeClose(tb, w, err, rec)
	return buf.Bytes()
}

// otherIPC is an Arrow IPC file or stream written by arrow-go's ipc
// writers.
type otherIPC struct {
	name, layout string
	rows, batch  int
	stream       bool
	opts         []ipc.Option
}

var otherIPCs = []otherIPC{
	{"lists-file", "lists", 300, 70, false, nil},
	{"lists-stream-lz4", "lists", 300, 90, true, []ipc.Option{ipc.WithLZ4()}},
	{"large-file-zstd", "large", 200, 64, false, []ipc.Option{ipc.WithZstd()}},
	{"pairs-stream", "pairs", 200, 80, true, nil},
	{"long-file-lz4", "long", 150, 1000, false, []ipc.Option{ipc.WithLZ4()}},
	{"vector-file", "vector", 150, 50, false, nil},
	{"dict-text-stream", "dict-text", 120, 40, true, []ipc.Option{ipc.WithDictionaryDeltas(true)}},
	{"dense-stream-zstd", "dense", 200, 60, true, []ipc.Option{ipc.WithZstd()}},
	{"columns-file", "columns", 200, 100, false, nil},
}

func (o otherIPC) bytes(tb testing.TB) []byte {
	rec := otherRecord(o.layout, o.rows, uint64(len(o.name)))
	defer rec.Release()
	var buf bytes.Buffer
	opts := append([]ipc.Option{ipc.WithSchema(rec.Schema())}, o.opts...)
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if o.stream {
		w = ipc.NewWriter(&buf, opts...)
	} else {
		fw, err := ipc.NewFileWriter(&buf, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		w = fw
	}
	n := rec.NumRows()
	for lo := int64(0); lo < n; lo += int64(o.batch) {
		s := rec.NewSlice(lo, min(lo+int64(o.batch), n))
		err := w.Write(s)
		s.Release()
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// allOtherFiles are the files above and the Parquet fixtures, by name (with
// the extension of their format).
func allOtherFiles(tb testing.TB) map[string][]byte {
	files := map[string][]byte{}
	for _, o := range otherParquets {
		files[o.name+".parquet"] = o.bytes(tb)
	}
	// As parquet-mr writes: page CRCs (see withPageCRCs).
	files["lists-crc-snappy.parquet"] = withPageCRCs(tb, files["lists-v1-dict-snappy.parquet"])
	files["long-crc-zstd.parquet"] = withPageCRCs(tb, files["long-v2-zstd.parquet"])
	for _, o := range otherIPCs {
		ext := ".arrow"
		if o.stream {
			ext = ".arrows"
		}
		files[o.name+ext] = o.bytes(tb)
	}
	fixtures, _ := filepath.Glob(filepath.Join(fixtureDir, "*.parquet"))
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		files[filepath.Base(f)] = b
	}
	return files
}

// readDamaged reads the file at path as documents or, when its schema
// holds none, as dense rows or texts, and returns the error of the pass
// (nil when it read the file, or refused its schema). A panic that reaches
// this goroutine fails the test; one on a pass's own goroutines would end
// the test binary.
func readDamaged(t *testing.T, path string) (as string, err error) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: a panic escaped the reader: %v", path, p)
		}
	}()
	ctx := context.Background()
	o := stream.Options{Workers: 2, BatchRows: 37, InflightBytes: 64 << 10}
	// Refusing a schema (the layout a flip made) is an answer too.
	refused := func(err error) bool {
		return errors.Is(err, stream.ErrSchema) || errors.Is(err, stream.ErrIsText) || errors.Is(err, stream.ErrFormat)
	}
	defer func() {
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("the error does not name the file: %v", err)
		}
	}()
	src, err := stream.Open(path, o)
	if err == nil {
		_, err = stream.Collect(ctx, src)
		return "documents", err
	}
	if !refused(err) {
		return "", err
	}
	if texts, err := stream.OpenText(path, o); err == nil {
		for _, err := range texts.Texts(ctx) {
			if err != nil {
				return "texts", err
			}
		}
		return "texts", nil
	} else if !refused(err) {
		return "", err
	}
	dense, err := stream.OpenDense(path, o)
	if err == nil {
		_, err = stream.CollectDense(ctx, dense)
		return "dense", err
	}
	if !refused(err) {
		return "", err
	}
	return "refused", nil
}

// The files of other writers read as they are written.
func TestOtherWritersRead(t *testing.T) {
	dir := t.TempDir()
	for name, b := range allOtherFiles(t) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "null-element") {
			continue // a null entry: refused, as TestOtherWriterFixtures checks
		}
		want := "documents"
		switch {
		case strings.Contains(name, "dict-text"):
			want = "refused" // a dictionary-encoded text column (pandas' category)
		case strings.Contains(name, "text"):
			want = "texts"
		case strings.Contains(name, "dense"), strings.Contains(name, "columns"):
			want = "dense"
		}
		if as, err := readDamaged(t, path); err != nil || as != want {
			t.Errorf("%s: read as %s: %v; want %s", name, as, err, want)
		}
	}
}

// Every file of another writer, damaged by one flipped bit at a few
// hundred places, is read to its end or refused with an error naming it:
// never a panic, a crash or a hang. (The fuzz targets below go on from
// here.)
func TestOtherWritersDamaged(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(30, 30))
	per := 24
	if testing.Short() {
		per = 6
	}
	for name, b := range allOtherFiles(t) {
		for i := range per {
			c := slices.Clone(b)
			// Half the flips in the last 10%: the footer and schema.
			at := r.IntN(len(c))
			if i%2 == 0 {
				at = len(c) - 1 - r.IntN(len(c)/10+1)
			}
			c[at] ^= 1 << r.IntN(8)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, c, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _ = readDamaged(t, path)
		}
	}
}

// fuzzOther is the body of the fuzz targets: data, with the bit x of byte
// at flipped, is written as a file named name and read.
func fuzzOther(f *testing.F, ext func(data []byte) string, seeds func(name string) bool) {
	for name, b := range allOtherFiles(f) {
		if seeds(name) {
			f.Add(b, uint(len(b)-20), byte(1))
			f.Add(b, uint(len(b)/3), byte(0x10))
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, at uint, x byte) {
		if len(data) > 0 {
			data = slices.Clone(data)
			data[at%uint(len(data))] ^= x
		}
		path := filepath.Join(dir, "f"+ext(data))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = readDamaged(t, path)
	})
}

// FuzzParquetOther damages Parquet files of other writers.
func FuzzParquetOther(f *testing.F) {
	fuzzOther(f, func([]byte) string { return ".parquet" }, func(n string) bool { return strings.HasSuffix(n, ".parquet") })
}

// FuzzArrowOther damages Arrow IPC files and streams of other writers.
func FuzzArrowOther(f *testing.F) {
	fuzzOther(f, func(data []byte) string {
		if bytes.HasPrefix(data, magicArrow) {
			return ".arrow"
		}
		return ".arrows"
	}, func(n string) bool { return !strings.HasSuffix(n, ".parquet") })
}

// TestColumnArraysBodyPanic: a loop body over columnArrays that panics (a
// consumer decoding a damaged array) runs inside the reader's guard; the
// panic must go on to the range statement's caller, not be swallowed or
// followed by another yield (which the runtime turns into "range function
// continued iteration after loop body panic"), for every container.
func TestColumnArraysBodyPanic(t *testing.T) {
	dir := t.TempDir()
	for _, o := range otherIPCs[:2] {
		path := filepath.Join(dir, o.name+map[bool]string{false: ".arrow", true: ".arrows"}[o.stream])
		if err := os.WriteFile(path, o.bytes(t), 0o644); err != nil {
			t.Fatal(err)
		}
		k := kindArrow
		if o.stream {
			k = kindStream
		}
		got := func() (p any) {
			defer func() { p = recover() }()
			for a, err := range columnArrays(context.Background(), path, k, "terms") {
				if err != nil {
					t.Fatalf("%s: %v", o.name, err)
				}
				a.Release()
				panic("body")
			}
			return nil
		}()
		var pe *stream.PanicError
		if err, ok := got.(error); !ok || !errors.As(err, &pe) || pe.Value != "body" {
			t.Errorf("%s: recovered %v (%T), want the body's panic", o.name, got, got)
		}
	}
}
