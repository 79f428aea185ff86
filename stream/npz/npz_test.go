package npz

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
)

// npyArray encodes values as a one-dimensional .npy array of descr (a
// scalar when scalar), as numpy.save writes it.
func npyArray(descr string, values []float64, scalar bool) []byte {
	shape := fmt.Sprintf("(%d,)", len(values))
	if scalar {
		shape = "()"
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	var b bytes.Buffer
	b.WriteString(npy.Magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	for _, v := range values {
		switch descr {
		case "<i4":
			binary.Write(&b, binary.LittleEndian, int32(v))
		case "<i8":
			binary.Write(&b, binary.LittleEndian, int64(v))
		case "<f8":
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	return b.Bytes()
}

// csr is a matrix as save_npz stores it.
type csr struct {
	format      string
	rows, cols  int
	indptr, ind []float64
	data        []float64
	dataType    string
	deflate     bool
}

// write saves m as a .npz file at path.
func (m csr) write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, m.bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bytes is m as the bytes of a .npz file.
func (m csr) bytes(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	members := []struct {
		name string
		body []byte
	}{
		{"indices.npy", npyArray("<i4", m.ind, false)},
		{"indptr.npy", npyArray("<i4", m.indptr, false)},
		{"format.npy", append(npyArray("|S3", nil, true), m.format...)},
		{"shape.npy", npyArray("<i8", []float64{float64(m.rows), float64(m.cols)}, false)},
		{"data.npy", npyArray(m.dataType, m.data, false)},
	}
	for _, mem := range members {
		method := zip.Store
		if m.deflate {
			method = zip.Deflate
		}
		w, err := z.CreateHeader(&zip.FileHeader{Name: mem.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(mem.body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// docsOf reads every document of the file at path as term → count maps.
func docsOf(t *testing.T, path string, o stream.Options) ([]map[int32]int32, error) {
	t.Helper()
	src, err := Open(path, o)
	if err != nil {
		return nil, err
	}
	var out []map[int32]int32
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			return out, err
		}
		if b.Start != int64(len(out)) {
			t.Fatalf("batch starts at %d after %d documents", b.Start, len(out))
		}
		for i := range b.Len() {
			terms, counts := b.Doc(i)
			m := map[int32]int32{}
			for j, w := range terms {
				m[w] = counts[j]
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// A CSR matrix saved as save_npz does reads as its rows, stored or
// deflated, counts as integers or whole floats, in any batch size; an
// explicit zero is no entry, an empty row an empty document.
func TestCSR(t *testing.T) {
	m := csr{format: "csr", rows: 4, cols: 5,
		indptr: []float64{0, 2, 2, 5, 6}, ind: []float64{4, 1, 0, 3, 2, 1}, data: []float64{2, 1, 3, 0, 1, 7}, dataType: "<i8"}
	want := []map[int32]int32{{4: 2, 1: 1}, {}, {0: 3, 2: 1}, {1: 7}}
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		deflate bool
		dtype   string
	}{{"stored.npz", false, "<i8"}, {"deflated.npz", true, "<i8"}, {"floats.npz", true, "<f8"}} {
		m.deflate, m.dataType = c.deflate, c.dtype
		path := filepath.Join(dir, c.name)
		m.write(t, path)
		if f, err := stream.Detect(path, ""); err != nil || f.Name != Format {
			t.Fatalf("%s detected as %q, %v", c.name, f.Name, err)
		}
		for _, rows := range []int{1, 3, 100} {
			got, err := docsOf(t, path, stream.Options{BatchRows: rows})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d documents", c.name, len(got))
			}
			for i := range want {
				if !maps.Equal(got[i], want[i]) {
					t.Fatalf("%s, %d rows per batch: document %d is %v, want %v", c.name, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// What is not a CSR matrix of counts is refused, naming the file and the
// member (and the document, for a bad entry).
func TestCSRRefusals(t *testing.T) {
	good := csr{format: "csr", rows: 2, cols: 3, indptr: []float64{0, 2, 3}, ind: []float64{0, 2, 1}, data: []float64{1, 2, 3}, dataType: "<f8"}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		edit func(*csr)
		want string
		row  int64
	}{
		{"csc", func(m *csr) { m.format = "csc" }, "tocsr", -1},
		{"fraction", func(m *csr) { m.data = []float64{1, 2.5, 3} }, "whole", -1},
		{"duplicate", func(m *csr) { m.ind = []float64{2, 2, 1} }, "twice", 0},
		{"range", func(m *csr) { m.ind = []float64{0, 3, 1} }, "outside", 0},
		{"pointers", func(m *csr) { m.indptr = []float64{0, 2} }, "row pointers", -1},
		{"lengths", func(m *csr) { m.data = []float64{1, 2} }, "values", -1},
	} {
		m := good
		c.edit(&m)
		path := filepath.Join(dir, c.name+".npz")
		m.write(t, path)
		_, err := docsOf(t, path, stream.Options{})
		var se *stream.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) || (c.row >= 0 && se.Row != c.row) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", c.name, err, path, c.want)
		}
	}
}

// A matrix that scipy.sparse.save_npz wrote (scikit-learn's
// CountVectorizer output, saved as it is) reads as scipy's own rows.
func TestScipySaveNPZ(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import scipy.sparse").Run() != nil {
		if os.Getenv("STREAMFIT_REQUIRE_GENSIM") != "" {
			t.Fatal("scipy is required (STREAMFIT_REQUIRE_GENSIM: python3-gensim brings it) but /usr/bin/python3 cannot import it")
		}
		t.Skip("no /usr/bin/python3 with scipy (Debian: python3-scipy)")
	}
	dir := t.TempDir()
	script := `
import json, sys
import numpy as np, scipy.sparse as sp
rng = np.random.default_rng(3)
X = sp.random(700, 400, density=0.03, format="csr", random_state=3)
X.data = rng.integers(1, 9, size=X.data.shape).astype(np.int64)
sp.save_npz(sys.argv[1] + "/cv.npz", X)
json.dump([{str(j): int(v) for j, v in zip(X.indices[X.indptr[i]:X.indptr[i+1]], X.data[X.indptr[i]:X.indptr[i+1]])} for i in range(X.shape[0])], open(sys.argv[1] + "/rows.json", "w"))
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("scipy: %v\n%s", err, out)
	}
	var want []map[string]int32
	b, _ := os.ReadFile(filepath.Join(dir, "rows.json"))
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got, err := docsOf(t, filepath.Join(dir, "cv.npz"), stream.Options{BatchRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d documents, scipy's %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: %d entries, scipy's %d", i, len(got[i]), len(want[i]))
		}
		for j, c := range want[i] {
			var w int32
			fmt.Sscan(j, &w)
			if got[i][w] != c {
				t.Fatalf("row %d, column %d: %d, scipy %d", i, w, got[i][w], c)
			}
		}
	}
}

// Arbitrary bytes named .npz open and read to an error or to documents,
// never to a panic or an allocation the file's size does not justify.
func FuzzNPZ(f *testing.F) {
	m := csr{format: "csr", rows: 4, cols: 5, indptr: []float64{0, 2, 2, 5, 6}, ind: []float64{4, 1, 0, 3, 2, 1}, data: []float64{2, 1, 3, 0, 1, 7}, dataType: "<i8"}
	f.Add(m.bytes(f))
	m.deflate, m.dataType = true, "<f8"
	f.Add(m.bytes(f))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.npz")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		docsOf(t, path, stream.Options{BatchRows: 2})
	})
}
