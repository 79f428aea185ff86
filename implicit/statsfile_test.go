package implicit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// testStats builds phase-1 statistics of a few random documents against a
// random Ω, and phase-2 statistics against a random W.
func testStats(t testing.TB, seed uint64) (p1, p2 *Stats) {
	t.Helper()
	const d, k, cols = 30, 3, 5
	r := rand.New(rand.NewPCG(seed, 1))
	b := stream.NewDocs(0)
	for range 40 {
		for term := range d {
			if r.IntN(4) == 0 {
				b.Add(int32(term), int32(1+r.IntN(3)))
			}
		}
		b.EndDoc()
	}
	fill := func(rows, c int, s uint64) *mat.Dense {
		rr := rand.New(rand.NewPCG(s, 2))
		m := mat.NewDense(rows, c, nil)
		for i := range rows {
			for j := range c {
				m.Set(i, j, rr.NormFloat64())
			}
		}
		return m
	}
	omega, w := fill(d, cols, 7), fill(d, k, 8)
	pa := NewPairAcc(d, cols)
	pa.Add(b, omega)
	ta := NewTripleAcc(d, k)
	ta.Add(b, w)
	h := StatsHeader{Model: "lda", Phase: 1, D: d, K: k, Cols: cols, Alpha0: 1, Seed: 1, Exact: true,
		VocabHash: VocabHash(d, nil), Basis: Fingerprint(omega), Shards: 1}
	p1 = &Stats{Header: h}
	p1.Pair = pa
	h.Phase, h.Cols, h.Basis = 2, k, Fingerprint(w)
	p2 = &Stats{Header: h}
	p2.Triple = ta
	p2.W = append([]float64(nil), w.RawMatrix().Data...)
	p2.Values = []float64{3, 2, 1}
	p2.Passes = 1
	return p1, p2
}

func TestStatsRoundTrip(t *testing.T) {
	p1, p2 := testStats(t, 1)
	dir := t.TempDir()
	for i, s := range []*Stats{p1, p2} {
		path := filepath.Join(dir, "s"+string(rune('1'+i))+".stats")
		if err := WriteStats(path, s); err != nil {
			t.Fatal(err)
		}
		got, err := ReadStats(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Header, s.Header) {
			t.Errorf("header %+v, want %+v", got.Header, s.Header)
		}
		// Exported fields only: scratch buffers are not serialised.
		if s.Pair != nil && (!reflect.DeepEqual(got.Pair.E2Omega, s.Pair.E2Omega) || !reflect.DeepEqual(got.Pair.M1, s.Pair.M1) ||
			got.Pair.Counts != s.Pair.Counts || got.Pair.Basis != s.Pair.Basis) {
			t.Errorf("phase 1 pair statistics changed in the round trip")
		}
		if s.Triple != nil {
			a, b := got.Triple, s.Triple
			if !reflect.DeepEqual(a.Y3, b.Y3) || !reflect.DeepEqual(a.Z, b.Z) || !reflect.DeepEqual(a.G2, b.G2) ||
				!reflect.DeepEqual(a.G3, b.G3) || !reflect.DeepEqual(a.Z2, b.Z2) || !reflect.DeepEqual(a.M1, b.M1) ||
				a.Counts != b.Counts || a.Basis != b.Basis || !reflect.DeepEqual(got.W, s.W) || !reflect.DeepEqual(got.Values, s.Values) {
				t.Errorf("phase 2 statistics changed in the round trip")
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the directory, want 2 (no temporary files left)", len(ents))
	}
}

func TestStatsCorrupt(t *testing.T) {
	p1, _ := testStats(t, 2)
	var buf bytes.Buffer
	if err := p1.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := DecodeStats(good); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrStatsTrunc},
		{"magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), ErrStatsMagic},
		{"json", []byte(`{"model":"lda"}`), ErrStatsMagic},
		{"version", edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 99); return b }), ErrStatsVersion},
		{"truncated header", good[:20], ErrStatsTrunc},
		{"truncated payload", good[:len(good)-10], ErrStatsTrunc},
		{"trailing bytes", append(bytes.Clone(good), 0), ErrStatsChecksum},
		{"payload bit", edit(func(b []byte) []byte { b[len(b)-5] ^= 1; return b }), ErrStatsChecksum},
		{"header bit", edit(func(b []byte) []byte { b[20] ^= 1; return b }), ErrStatsChecksum},
	}
	for _, c := range cases {
		_, err := DecodeStats(c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.stats")
	os.WriteFile(path, good[:len(good)-3], 0o644)
	if _, err := ReadStats(path); !errors.Is(err, ErrStatsTrunc) || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadStats of a truncated file: %v", err)
	}
}

func TestStatsMerge(t *testing.T) {
	a, a2 := testStats(t, 3)
	b, b2 := testStats(t, 4)
	wantDocs := a.Pair.Docs + b.Pair.Docs
	e0 := a.Pair.E2Omega[0] + b.Pair.E2Omega[0]
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Pair.Docs != wantDocs || a.Pair.E2Omega[0] != e0 || a.Header.Shards != 2 {
		t.Errorf("merged docs %d (want %d), E2Ω[0] %g (want %g), shards %d", a.Pair.Docs, wantDocs, a.Pair.E2Omega[0], e0, a.Header.Shards)
	}
	if err := a2.Merge(b2); err != nil {
		t.Fatal(err)
	}
	incompatible := []struct {
		field string
		edit  func(h *StatsHeader)
	}{
		{"model", func(h *StatsHeader) { h.Model = "topic" }},
		{"phase", func(h *StatsHeader) { h.Phase = 2 }},
		{"d (vocabulary size)", func(h *StatsHeader) { h.D = 31 }},
		{"k", func(h *StatsHeader) { h.K = 4 }},
		{"alpha0", func(h *StatsHeader) { h.Alpha0 = 0.5 }},
		{"seed", func(h *StatsHeader) { h.Seed = 2 }},
		{"vocabulary", func(h *StatsHeader) { h.VocabHash = VocabHash(30, []string{"x"}) }},
		{"basis", func(h *StatsHeader) { h.Basis = 12345 }},
	}
	for _, c := range incompatible {
		o, _ := testStats(t, 6)
		c.edit(&o.Header)
		err := a.Merge(o)
		var ie *IncompatibleError
		if !errors.As(err, &ie) || ie.Field != c.field || !errors.Is(err, ErrIncompatible) {
			t.Errorf("%s: merge error %v", c.field, err)
			continue
		}
		t.Logf("%s: %v", c.field, err)
	}
	// Same header, accumulators of a different Ω: the accumulator refuses.
	_, x := testStats(t, 7)
	x.Triple.Basis ^= 2
	if err := a2.Merge(x); !errors.Is(err, ErrBasis) {
		t.Errorf("merge of a different W: %v", err)
	}
}

// FuzzDecodeStats checks that no input makes the reader panic, and that what
// it accepts encodes back to a readable file.
func FuzzDecodeStats(f *testing.F) {
	p1, p2 := testStats(f, 9)
	for _, s := range []*Stats{p1, p2} {
		var buf bytes.Buffer
		if err := s.Encode(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeStats(data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeStats(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	})
}
