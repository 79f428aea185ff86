package models

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/internal/npy"
)

// TestLoadNumpyFile reads a file numpy.save wrote: (arange(10)+1) as a 2×5
// float32 matrix; rows come back normalized with α = 1/k.
func TestLoadNumpyFile(t *testing.T) {
	m, err := Load("testdata/topics_numpy.npy", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Model != "lda" || m.K != 2 || m.D != 5 || m.Alpha0 != 1 || m.Alpha[0] != 0.5 || m.Alpha[1] != 0.5 {
		t.Fatalf("model %s k=%d d=%d α=%v α₀=%g", m.Model, m.K, m.D, m.Alpha, m.Alpha0)
	}
	for i := range 2 {
		for j := range 5 {
			want := float64(5*i+j+1) / float64(25*i+15)
			if math.Abs(m.Topics[i][j]-want) > 1e-15 {
				t.Fatalf("topic %d word %d: %g, want %g", i, j, m.Topics[i][j], want)
			}
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err = Load("testdata/topics_numpy.npy", LoadOptions{Alpha: 0.3})
	if err != nil || m.Alpha[1] != 0.3 || math.Abs(m.Alpha0-0.6) > 1e-15 {
		t.Fatalf("--alpha 0.3: α %v α₀ %g, %v", m.Alpha, m.Alpha0, err)
	}
}

// npyBytes encodes rows as a .npy file of the given version, element type and byte order.
func npyBytes(t testing.TB, version byte, descr string, rows [][]float64, header string) []byte {
	t.Helper()
	if header == "" {
		header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
			strconv.Itoa(len(rows)) + ", " + strconv.Itoa(len(rows[0])) + "), }"
	}
	var buf bytes.Buffer
	buf.WriteString(npy.Magic)
	buf.WriteByte(version)
	buf.WriteByte(0)
	if version == 1 {
		binary.Write(&buf, binary.LittleEndian, uint16(len(header)))
	} else {
		binary.Write(&buf, binary.LittleEndian, uint32(len(header)))
	}
	buf.WriteString(header)
	var order binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	for _, row := range rows {
		for _, x := range row {
			if strings.HasSuffix(descr, "f4") {
				binary.Write(&buf, order, float32(x))
			} else {
				binary.Write(&buf, order, x)
			}
		}
	}
	return buf.Bytes()
}

func TestReadNPYVariants(t *testing.T) {
	rows := [][]float64{{0.25, 0.5, 0.25}, {0.125, 0.125, 0.75}}
	dir := t.TempDir()
	for _, c := range []struct {
		version byte
		descr   string
	}{{1, "<f8"}, {1, ">f8"}, {2, "<f4"}, {3, ">f4"}, {1, "=f8"}} {
		p := filepath.Join(dir, "m.npy")
		if err := os.WriteFile(p, npyBytes(t, c.version, c.descr, rows, ""), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNPY(p)
		if err != nil {
			t.Fatalf("version %d %s: %v", c.version, c.descr, err)
		}
		for i := range rows {
			for j := range rows[i] {
				if got[i][j] != rows[i][j] {
					t.Fatalf("version %d %s: row %d col %d = %g, want %g", c.version, c.descr, i, j, got[i][j], rows[i][j])
				}
			}
		}
	}
}

func TestLoadBadMatrices(t *testing.T) {
	dir := t.TempDir()
	good := [][]float64{{0.5, 0.5}, {0.2, 0.8}}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := npyBytes(t, 1, "<f8", good, "")
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"magic", []byte("not a numpy file"), "no NumPy magic"},
		{"int", npyBytes(t, 1, "<f8", good, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }"), "not float32 or float64"},
		{"fortran", npyBytes(t, 1, "<f8", good, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }"), "Fortran order"},
		{"3d", npyBytes(t, 1, "<f8", good, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 2), }"), "not two dimensional"},
		{"truncated", full[:len(full)-3], "needs"},
		{"negative", npyBytes(t, 1, "<f8", [][]float64{{0.5, 0.5}, {-0.1, 1.1}}, ""), "row 1, column 0"},
		{"nan", npyBytes(t, 1, "<f8", [][]float64{{0.5, math.NaN()}, {0.5, 0.5}}, ""), "row 0, column 1"},
		{"zero row", npyBytes(t, 1, "<f8", [][]float64{{0.5, 0.5}, {0, 0}}, ""), "row 1 is all zeros"},
	} {
		p := write(c.name+".npy", c.data)
		_, err := Load(p, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, p, c.want)
		}
	}
	if _, err := Load(write("ok.npy", full), LoadOptions{Alpha: -1}); err == nil {
		t.Error("a negative α was accepted")
	}
}

// TestTopicsParquetRoundTrip: a model written by WriteTopicsParquet loads
// back with the same topics, α, kind and vocabulary.
func TestTopicsParquetRoundTrip(t *testing.T) {
	m := &Model{Model: "topic", K: 2, D: 3, Alpha0: 0, Alpha: []float64{0.7, 0.3},
		Topics: [][]float64{{0.2, 0.3, 0.5}, {0.6, 0.4, 0}}, Vocab: []string{"a", "b", "c"}}
	p := filepath.Join(t.TempDir(), "t.parquet")
	if err := WriteTopicsParquet(m, p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "topic" || got.K != 2 || got.D != 3 || strings.Join(got.Vocab, ",") != "a,b,c" {
		t.Fatalf("read back %s k=%d d=%d vocab %v", got.Model, got.K, got.D, got.Vocab)
	}
	for i := range m.Topics {
		if got.Alpha[i] != m.Alpha[i] {
			t.Fatalf("α %v, want %v", got.Alpha, m.Alpha)
		}
		for j := range m.Topics[i] {
			if math.Abs(got.Topics[i][j]-m.Topics[i][j]) > 1e-15 {
				t.Fatalf("topic %d word %d: %g, want %g", i, j, got.Topics[i][j], m.Topics[i][j])
			}
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.parquet"), LoadOptions{}); err == nil {
		t.Error("a missing file loaded")
	}
}

// FuzzReadNPY: any bytes either fail with an error naming the file or give
// a k×d matrix whose size the header declared.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes(f, 1, "<f8", [][]float64{{0.5, 0.5}}, ""))
	f.Add(npyBytes(f, 2, ">f4", [][]float64{{1, 2, 3}, {4, 5, 6}}, ""))
	if b, err := os.ReadFile("testdata/topics_numpy.npy"); err == nil {
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.npy")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadNPY(p)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("no rows and no error")
		}
		for _, r := range rows {
			if len(r) != len(rows[0]) || len(r) == 0 {
				t.Fatalf("ragged or empty rows: %d and %d", len(r), len(rows[0]))
			}
		}
	})
}
