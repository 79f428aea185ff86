package ndarray

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
)

// NPY encodes values (row-major, shape) as the bytes numpy.save writes for
// an array of descr ("<f8", ">i4", "|u1", …), header padded to 64 bytes.
func NPY(descr string, shape []int, fortran bool, values []float64) []byte {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	sh := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	sh += ")"
	fo := "False"
	if fortran {
		fo = "True"
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fo, sh)
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	var b bytes.Buffer
	b.WriteString(npy.Magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	var order binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	for _, v := range values {
		switch descr[1:] {
		case "f8":
			binary.Write(&b, order, v)
		case "f4":
			binary.Write(&b, order, float32(v))
		case "i4":
			binary.Write(&b, order, int32(v))
		case "i8":
			binary.Write(&b, order, int64(v))
		case "i2":
			binary.Write(&b, order, int16(v))
		case "u1", "b1":
			b.WriteByte(byte(v))
		case "i1":
			b.WriteByte(byte(int8(v)))
		case "u2":
			binary.Write(&b, order, uint16(v))
		default:
			panic("NPY: no encoder for " + descr)
		}
	}
	return b.Bytes()
}

// rowsOf reads one pass of src as rows, checking that batches follow on.
func rowsOf(t *testing.T, src stream.DenseSource) ([][]float64, error) {
	t.Helper()
	var out [][]float64
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			return out, err
		}
		if b.Start != int64(len(out)) {
			t.Fatalf("batch starts at %d after %d rows", b.Start, len(out))
		}
		for i := range b.Rows {
			out = append(out, append([]float64(nil), b.Row(i)...))
		}
		b.Release()
	}
	return out, nil
}

func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Arrays of every element type read back as the values written, in any
// batch size, whole or with chosen columns; a 1-D array is one column.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// 7 rows of 3: small whole numbers, so that every type holds them.
	var vals []float64
	for i := range 21 {
		vals = append(vals, float64(i%11)-float64(i%3))
	}
	want := func(cols []int) [][]float64 {
		var w [][]float64
		for i := range 7 {
			r := vals[3*i : 3*i+3]
			if cols == nil {
				w = append(w, append([]float64(nil), r...))
				continue
			}
			var c []float64
			for _, j := range cols {
				c = append(c, r[j])
			}
			w = append(w, c)
		}
		return w
	}
	for _, descr := range []string{"<f8", ">f8", "<f4", ">f4", "<i4", ">i4", "<i8", "<i2", "|i1"} {
		for _, c := range []struct {
			batch   int
			columns []string
			cols    []int
		}{{0, nil, nil}, {2, nil, nil}, {3, []string{"2", "0"}, []int{2, 0}}} {
			p := write(t, dir, "x.npy", NPY(descr, []int{7, 3}, false, vals))
			src, err := Open(p, stream.Options{BatchRows: c.batch, Columns: c.columns})
			if err != nil {
				t.Fatalf("%s: %v", descr, err)
			}
			if info := src.Info(); info.Rows != 7 || info.Cols != len(want(c.cols)[0]) || info.Format != Format {
				t.Fatalf("%s: info %+v", descr, info)
			}
			got, err := rowsOf(t, src)
			if err != nil {
				t.Fatalf("%s: %v", descr, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want(c.cols)) {
				t.Fatalf("%s batch %d cols %v: got %v, want %v", descr, c.batch, c.cols, got, want(c.cols))
			}
		}
	}
	// Fractions survive float32 as float32 rounds them.
	p := write(t, dir, "f.npy", NPY("<f4", []int{2, 2}, false, []float64{0.1, -2.5, 1e-3, 3e8}))
	src, err := Open(p, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rowsOf(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if got[0][0] != float64(float32(0.1)) || got[1][1] != 3e8 || got[0][1] != -2.5 {
		t.Fatalf("float32 values %v", got)
	}
	// Unsigned bytes (images) and booleans; a 1-D array is one column.
	p = write(t, dir, "u.npy", NPY("|u1", []int{4}, false, []float64{0, 255, 7, 128}))
	src, err = Open(p, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err = rowsOf(t, src); err != nil || fmt.Sprint(got) != "[[0] [255] [7] [128]]" {
		t.Fatalf("uint8 column: %v, %v", got, err)
	}
	// A Fortran-order array of one column is the same bytes as C order.
	p = write(t, dir, "fc.npy", NPY("<f8", []int{3, 1}, true, []float64{1, 2, 3}))
	if src, err = Open(p, stream.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, err = rowsOf(t, src); err != nil || fmt.Sprint(got) != "[[1] [2] [3]]" {
		t.Fatalf("Fortran column: %v, %v", got, err)
	}
}

// The registry finds a .npy file by its content whatever its name.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "train.bin", NPY("<f8", []int{2, 2}, false, []float64{1, 2, 3, 4}))
	f, err := stream.Detect(p, "")
	if err != nil || f.Name != Format {
		t.Fatalf("detected %q, %v", f.Name, err)
	}
	if Match("y.npy", nil) != 1 || Match("y.csv", nil) != 0 {
		t.Fatal("Match by name")
	}
}

// Bad arrays are errors naming the file, and the row and column of a bad
// value; none panics.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := []float64{1, 2, 3, 4, 5, 6}
	nan := []float64{1, 2, 3, 4, math.NaN(), 6}
	inf := []float64{1, 2, 3, math.Inf(-1), 5, 6}
	full := NPY("<f8", []int{3, 2}, false, good)
	for _, c := range []struct {
		name    string
		data    []byte
		o       stream.Options
		kind    error
		where   string // in the message
		atOpen  bool
		row     int64
		column  string
		badPass bool
	}{
		{name: "nan", data: NPY("<f8", []int{3, 2}, false, nan), kind: stream.ErrValue, where: "NaN", row: 2, column: "0"},
		{name: "inf", data: NPY("<f4", []int{3, 2}, false, inf), kind: stream.ErrValue, where: "-Inf", row: 1, column: "1"},
		{name: "truncated", data: full[:len(full)-3], kind: stream.ErrCorrupt, where: "truncated", atOpen: true, row: -1},
		{name: "fortran", data: NPY("<f8", []int{3, 2}, true, good), kind: stream.ErrSchema, where: "ascontiguousarray", atOpen: true, row: -1},
		{name: "3d", data: NPY("<f8", []int{1, 3, 2}, false, good), kind: stream.ErrSchema, where: "reshape", atOpen: true, row: -1},
		{name: "strings", data: NPY("|S3", []int{2}, false, nil), kind: stream.ErrSchema, where: "want numbers", atOpen: true, row: -1},
		{name: "no columns", data: NPY("<f8", []int{3, 0}, false, nil), kind: stream.ErrSchema, where: "no features", atOpen: true, row: -1},
		{name: "column name", data: full, o: stream.Options{Columns: []string{"a"}}, kind: stream.ErrSchema, where: "0-based index", atOpen: true, row: -1},
		{name: "column range", data: full, o: stream.Options{Columns: []string{"2"}}, kind: stream.ErrSchema, where: "columns 0..1", atOpen: true, row: -1},
		{name: "group", data: full, o: stream.Options{GroupColumn: "seq"}, kind: stream.ErrSchema, where: "np.savez", atOpen: true, row: -1, column: "seq"},
		{name: "huge shape", data: NPY("<f8", []int{1 << 40, 1 << 40}, false, nil), kind: stream.ErrSchema, where: "more bytes", atOpen: true, row: -1},
		{name: "not npy", data: []byte("\x93NUMPX\x01\x00"), kind: stream.ErrFormat, where: "magic", atOpen: true, row: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, dir, c.name+".npy", c.data)
			src, err := Open(p, c.o)
			if err == nil {
				if c.atOpen {
					t.Fatal("opened")
				}
				_, err = rowsOf(t, src)
			} else if !c.atOpen {
				t.Fatalf("refused at open: %v", err)
			}
			var se *stream.Error
			if !errors.As(err, &se) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want %v mentioning %q and the file", err, c.kind, c.where)
			}
			if se.Row != c.row || se.Column != c.column {
				t.Fatalf("error at row %d column %q, want %d %q: %v", se.Row, se.Column, c.row, c.column, err)
			}
		})
	}
}

// A file rewritten between passes fails the next pass, naming it.
func TestChanged(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "x.npy", NPY("<f8", []int{2, 2}, false, []float64{1, 2, 3, 4}))
	src, err := Open(p, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rowsOf(t, src); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "x.npy", NPY("<f8", []int{3, 2}, false, []float64{1, 2, 3, 4, 5, 6}))
	os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
	if _, err := rowsOf(t, src); !errors.Is(err, stream.ErrChanged) {
		t.Fatalf("second pass after a rewrite: %v", err)
	}
}

// A pass allocates for a batch, not for the file: reading 100 times more
// rows allocates about the same.
func TestMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	alloc := func(n int) uint64 {
		vals := make([]float64, 4*n)
		for i := range vals {
			vals[i] = float64(i % 97)
		}
		p := write(t, dir, fmt.Sprintf("m%d.npy", n), NPY("<f8", []int{n, 4}, false, vals))
		src, err := Open(p, stream.Options{BatchRows: 1024})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rows := 0
		for b, err := range src.Rows(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			rows += b.Rows
			b.Release()
		}
		runtime.ReadMemStats(&after)
		if rows != n {
			t.Fatalf("%d rows of %d", rows, n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(2000), alloc(200000)
	t.Logf("allocated %d and %d bytes", small, large)
	// 200k rows of 4 float64 are 6.4 MB; a pass that held them, or
	// allocated per row or per batch without reuse, would allocate that
	// much or more. The buffers of one batch (32 KB each) and the reader's
	// 256 KB buffer are the floor; the pool may drop a batch at a GC.
	if large > small+2<<20 {
		t.Fatalf("a pass over 200000 rows allocated %d bytes, over 2000 rows %d", large, small)
	}
}
