package npz

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
)

// npy2 encodes a C-order little-endian array of shape as numpy.save does.
func npy2(descr string, shape []int, values []float64) []byte {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	sh := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s), }", descr, sh)
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	var b bytes.Buffer
	b.WriteString(npy.Magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	for _, v := range values {
		switch descr {
		case "<f8":
			binary.Write(&b, binary.LittleEndian, v)
		case "<f4":
			binary.Write(&b, binary.LittleEndian, float32(v))
		case "<i8":
			binary.Write(&b, binary.LittleEndian, int64(v))
		case "<i4":
			binary.Write(&b, binary.LittleEndian, int32(v))
		}
	}
	return b.Bytes()
}

type member struct {
	name string
	body []byte
}

// savez writes members as np.savez (stored) or np.savez_compressed
// (deflated) would.
func savez(t *testing.T, path string, deflate bool, ms ...member) {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, m := range ms {
		method := zip.Store
		if deflate {
			method = zip.Deflate
		}
		w, err := z.CreateHeader(&zip.FileHeader{Name: m.name + ".npy", Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// denseOf reads one pass: the rows and the ids.
func denseOf(t *testing.T, src stream.DenseSource) ([][]float64, []int64, error) {
	t.Helper()
	var rows [][]float64
	var ids []int64
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			return rows, ids, err
		}
		if b.Start != int64(len(rows)) {
			t.Fatalf("batch starts at %d after %d rows", b.Start, len(rows))
		}
		for i := range b.Rows {
			rows = append(rows, append([]float64(nil), b.Row(i)...))
		}
		ids = append(ids, b.Group...)
		b.Release()
	}
	return rows, ids, nil
}

// The samples of np.savez and np.savez_compressed read back, with their
// ids, in any batch size; the only 2-D member is found without a name,
// and stream.OpenDense reaches it through the registry.
func TestDenseRoundTrip(t *testing.T) {
	dir := t.TempDir()
	n, d := 11, 3
	var x, seq []float64
	for i := range n * d {
		x = append(x, float64(i)/4-2)
	}
	for i := range n {
		seq = append(seq, float64(i/4))
	}
	for _, deflate := range []bool{false, true} {
		p := filepath.Join(dir, fmt.Sprintf("x%v.npz", deflate))
		savez(t, p, deflate, member{"seq", npy2("<i8", []int{n}, seq)}, member{"x", npy2("<f4", []int{n, d}, x)})
		for _, batch := range []int{0, 1, 4} {
			src, err := stream.OpenDense(p, stream.Options{GroupColumn: "seq", BatchRows: batch})
			if err != nil {
				t.Fatal(err)
			}
			if info := src.Info(); info.Rows != int64(n) || info.Cols != d || info.Layout != LayoutArray {
				t.Fatalf("info %+v", info)
			}
			rows, ids, err := denseOf(t, src)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				for j := range d {
					if rows[i][j] != x[i*d+j] {
						t.Fatalf("deflate %v batch %d: row %d = %v", deflate, batch, i, rows[i])
					}
				}
				if ids[i] != int64(seq[i]) {
					t.Fatalf("ids %v", ids)
				}
			}
		}
	}
	// Two 2-D members: the values column names one; columns by index.
	p := filepath.Join(dir, "two.npz")
	savez(t, p, false, member{"train", npy2("<f8", []int{2, 2}, []float64{1, 2, 3, 4})}, member{"test", npy2("<f8", []int{1, 2}, []float64{5, 6})})
	if _, err := OpenDense(p, stream.Options{}); !errors.Is(err, stream.ErrSchema) || !strings.Contains(err.Error(), "train, test") {
		t.Fatalf("ambiguous members: %v", err)
	}
	src, err := OpenDense(p, stream.Options{ValuesColumn: "test", Columns: []string{"1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rows, _, err := denseOf(t, src); err != nil || fmt.Sprint(rows) != "[[6]]" {
		t.Fatalf("member test, column 1: %v %v", rows, err)
	}
}

// Bad dense .npz files are errors naming the file, the member and, for a
// bad value, its row and column.
func TestDenseBadInput(t *testing.T) {
	dir := t.TempDir()
	x := npy2("<f8", []int{3, 2}, []float64{1, 2, 3, math.NaN(), 5, 6})
	good := npy2("<f8", []int{3, 2}, []float64{1, 2, 3, 4, 5, 6})
	p := filepath.Join(dir, "nan.npz")
	savez(t, p, true, member{"x", x})
	src, err := OpenDense(p, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = denseOf(t, src)
	var se *stream.Error
	if !errors.As(err, &se) || !errors.Is(err, stream.ErrValue) || se.Row != 1 || se.Column != "x[1]" {
		t.Fatalf("NaN: %v", err)
	}
	for _, c := range []struct {
		name    string
		members []member
		o       stream.Options
		kind    error
		want    string
	}{
		{"missing ids", []member{{"x", good}}, stream.Options{GroupColumn: "seq"}, stream.ErrSchema, `no id member "seq"`},
		{"short ids", []member{{"x", good}, {"seq", npy2("<i8", []int{2}, []float64{0, 1})}}, stream.Options{GroupColumn: "seq"}, stream.ErrSchema, "one id per row"},
		{"float ids", []member{{"x", good}, {"seq", npy2("<f8", []int{3}, []float64{0, 1, 1})}}, stream.Options{GroupColumn: "seq"}, stream.ErrSchema, "integer ids"},
		{"no 2-D", []member{{"v", npy2("<f8", []int{3}, []float64{0, 1, 1})}}, stream.Options{}, stream.ErrSchema, "no array of shape"},
		{"missing values", []member{{"x", good}}, stream.Options{ValuesColumn: "y"}, stream.ErrSchema, `no member "y"`},
		{"short member", []member{{"x", good[:len(good)-8]}}, stream.Options{}, stream.ErrCorrupt, "header's shape needs"},
	} {
		p := filepath.Join(dir, "bad.npz")
		savez(t, p, false, c.members...)
		_, err := OpenDense(p, c.o)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %v with %q", c.name, err, c.kind, c.want)
		}
	}
	// A sparse matrix is documents: refused as dense samples.
	m := csr{format: "csr", rows: 1, cols: 2, indptr: []float64{0, 1}, ind: []float64{1}, data: []float64{2}, dataType: "<i8"}
	p = filepath.Join(dir, "csr.npz")
	m.write(t, p)
	if _, err := OpenDense(p, stream.Options{}); !errors.Is(err, stream.ErrSchema) || !strings.Contains(err.Error(), "sparse") {
		t.Fatalf("CSR as dense: %v", err)
	}
	// A stored value changed after the member was written: only the
	// CRC-32 tells, at the end of the pass.
	p = filepath.Join(dir, "crc.npz")
	savez(t, p, false, member{"x", good})
	b, _ := os.ReadFile(p)
	i := bytes.Index(b, good[len(good)-8:])
	b[i+7] ^= 0x01 // 6.0 → another finite float
	os.WriteFile(p, b, 0o644)
	if src, err = OpenDense(p, stream.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := denseOf(t, src); !errors.Is(err, stream.ErrCorrupt) || !strings.Contains(err.Error(), "CRC-32") {
		t.Fatalf("damaged member: %v", err)
	}
}
