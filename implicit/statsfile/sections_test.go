package statsfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// countingWriter records the size of every write.
type countingWriter struct {
	bytes.Buffer
	writes []int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, len(p))
	return c.Buffer.Write(p)
}

// TestSections writes sections of more than one chunk, with and without
// low words, reads them back bit for bit at the offsets of their chunks,
// checks the layout (values, then low words, per chunk) and the flushes,
// and refuses metadata that does not describe the sections and bytes after
// the last one.
func TestSections(t *testing.T) {
	n := SectionChunk + 5
	v, lo := make([]float64, n), make([]uint64, n)
	for i := range v {
		v[i], lo[i] = math.Sqrt(float64(i))-3, uint64(i)*0x9e3779b97f4a7c15>>1
	}
	secs := []Section{{Name: "a", F64: []float64{-0.0, math.Inf(1), 1e-300}}, {Name: "b", F64: v, Lo: lo}}
	var w countingWriter
	if err := WriteSections(&w, []byte("head"), secs, 4096); err != nil {
		t.Fatal(err)
	}
	data := w.Bytes()
	if want := 4 + 8*3 + 16*n; len(data) != want {
		t.Fatalf("%d bytes, want %d", len(data), want)
	}
	if !strings.HasPrefix(string(data), "head") {
		t.Fatal("the head is not written first")
	}
	// Section b's first chunk: SectionChunk values, then their low words.
	first := 4 + 8*3
	if got := math.Float64frombits(binary.LittleEndian.Uint64(data[first+8:])); got != v[1] {
		t.Errorf("value 1 of b reads %g, want %g", got, v[1])
	}
	if got := binary.LittleEndian.Uint64(data[first+8*SectionChunk+8:]); got != lo[1] {
		t.Errorf("low word 1 of b reads %x, want %x", got, lo[1])
	}
	for _, n := range w.writes[:len(w.writes)-1] {
		if n < 4096 {
			t.Errorf("a write of %d bytes before the last, under the flush size", n)
		}
	}

	metas := []SectionMeta{secs[0].Meta(), secs[1].Meta()}
	got := []Section{{Name: "a", F64: make([]float64, 3)}, {Name: "b", F64: make([]float64, n), Lo: make([]uint64, n)}}
	err := ReadSections(bytes.NewReader(data[4:]), got, metas, func(i, off int, v []float64, lo []uint64) error {
		copy(got[i].F64[off:], v)
		if got[i].Lo != nil {
			copy(got[i].Lo[off:], lo)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range secs {
		if !slices.EqualFunc(got[i].F64, secs[i].F64, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) || !slices.Equal(got[i].Lo, secs[i].Lo) {
			t.Errorf("section %s differs when read back", secs[i].Name)
		}
	}

	none := func(int, int, []float64, []uint64) error { return nil }
	bad := []SectionMeta{metas[0], {Name: "b", Len: n, Exact: false}}
	if err := ReadSections(bytes.NewReader(data[4:]), got, bad, none); err == nil || !strings.Contains(err.Error(), "inconsistent") {
		t.Errorf("metadata without b's low words: %v", err)
	}
	if err := ReadSections(bytes.NewReader(data[4:]), got, metas[:1], none); err == nil {
		t.Error("metadata of one section for two read")
	}
	if err := ReadSections(bytes.NewReader(append(slices.Clone(data[4:]), 0)), got, metas, none); err == nil || !strings.Contains(err.Error(), "after the last section") {
		t.Errorf("a byte after the last section: %v", err)
	}
	if err := ReadSections(bytes.NewReader(data[4:len(data)-1]), got, metas, none); err == nil {
		t.Error("a cut section was read")
	}
}
