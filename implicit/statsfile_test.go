package implicit

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// testStats builds phase-1 statistics of a few random documents against a
// random Ω, and phase-2 statistics against a random W, with plain totals.
func testStats(t testing.TB, seed uint64) (p1, p2 *TopicStats) {
	t.Helper()
	return statsOf(t, seed, false)
}

// testExactStats is testStats with exact totals (Exact), as the commands
// write them.
func testExactStats(t testing.TB, seed uint64) (p1, p2 *TopicStats) {
	t.Helper()
	return statsOf(t, seed, true)
}

func statsOf(t testing.TB, seed uint64, exact bool) (p1, p2 *TopicStats) {
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
	ta := NewTripleAcc(d, k)
	var pe, te *Exact
	if exact {
		var err error
		if pe, err = NewPairExact(pa, omega, nil); err == nil {
			err = pe.Pass(context.Background(), single(b), 1, nil, PassOptions{})
		}
		if te, err = NewTripleExact(ta, w, nil); err == nil {
			err = te.Pass(context.Background(), single(b), 1, nil, PassOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	} else {
		pa.Add(b, omega)
		ta.Add(b, w)
	}
	h := statsfile.Header{Model: "lda", Phase: 1, D: d, K: k, Cols: cols, Alpha0: 1, Seed: 1, Exact: true,
		VocabHash: statsfile.VocabHash(d, nil), Basis: Fingerprint(omega), Shards: 1}
	p1 = &TopicStats{Header: h}
	p1.Pair, p1.Exact = pa, pe
	h.Phase, h.Cols, h.Basis = 2, k, Fingerprint(w)
	p2 = &TopicStats{Header: h}
	p2.Triple, p2.Exact = ta, te
	p2.W = append([]float64(nil), w.RawMatrix().Data...)
	p2.Values = []float64{3, 2, 1}
	p2.Passes = 1
	return p1, p2
}

// powerStats is the exact phase-1 statistics of testExactStats as those of
// a power pass: Power 1 and the projection stored as W (any values: files
// do not check it).
func powerStats(t testing.TB, seed uint64) *TopicStats {
	t.Helper()
	p1, _ := testExactStats(t, seed)
	p1.Header.Power = 1
	p1.W = slices.Clone(p1.Pair.E2Omega)
	return p1
}

// TestPowerStatsFile checks that the statistics of a power pass keep their
// number and projection through a file, and that merges across power
// passes are refused naming the field.
func TestPowerStatsFile(t *testing.T) {
	pw := powerStats(t, 3)
	path := filepath.Join(t.TempDir(), "pw.stats")
	if err := WriteTopicStats(context.Background(), path, pw); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTopicStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Power != 1 || !slices.Equal(got.W, pw.W) || !slices.Equal(got.Pair.E2Omega, pw.Pair.E2Omega) {
		t.Errorf("power statistics read back as power pass %d, W equal %t", got.Header.Power, slices.Equal(got.W, pw.W))
	}
	p1, _ := testExactStats(t, 4)
	var ie *statsfile.IncompatibleError
	if err := got.Merge(p1); !errors.As(err, &ie) || ie.Field != "power pass" {
		t.Errorf("merge of power-pass and phase-1 statistics: %v", err)
	}
	if err := p1.MergeFile(path); !errors.As(err, &ie) || ie.Field != "power pass" {
		t.Errorf("merge of a power-pass file into phase-1 statistics: %v", err)
	}
}

func TestStatsRoundTrip(t *testing.T) {
	p1, p2 := testStats(t, 1)
	e1, e2 := testExactStats(t, 1)
	dir := t.TempDir()
	for i, s := range []*TopicStats{p1, p2, e1, e2} {
		path := filepath.Join(dir, "s"+string(rune('1'+i))+".stats")
		if (s.Exact != nil) != (i >= 2) {
			t.Fatal("testExactStats without exact totals")
		}
		if err := WriteTopicStats(context.Background(), path, s); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTopicStats(path)
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
		if !reflect.DeepEqual(lows(got.Exact), lows(s.Exact)) {
			t.Errorf("exact totals changed in the round trip")
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d files in the directory, want 4 (no temporary files left)", len(ents))
	}
}

// TestStatsNoCubes checks that phase-2 statistics without cube sums
// (NewTripleAccNoCubes) read back as written.
func TestStatsNoCubes(t *testing.T) {
	_, p2 := testStats(t, 1)
	a := NewTripleAccNoCubes(p2.Header.D, p2.Header.K)
	a.Counts = p2.Triple.Counts
	copy(a.Z, p2.Triple.Z)
	copy(a.Z2, p2.Triple.Z2)
	copy(a.M1, p2.Triple.M1)
	p2.Triple = a
	var buf bytes.Buffer
	if err := p2.Encode(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTopicStats(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Triple; !b.NoCubes || b.Y3 != nil || !slices.Equal(b.Z, a.Z) || !slices.Equal(b.Z2, a.Z2) || !slices.Equal(b.M1, a.M1) || b.Counts != a.Counts {
		t.Errorf("statistics without cubes changed in the round trip")
	}
}

func TestStatsCorrupt(t *testing.T) {
	p1, _ := testStats(t, 2)
	var buf bytes.Buffer
	if err := p1.Encode(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := DecodeTopicStats(good); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, statsfile.ErrTruncated},
		{"magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), statsfile.ErrMagic},
		{"json", []byte(`{"model":"lda"}`), statsfile.ErrMagic},
		{"version", edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 99); return b }), statsfile.ErrVersion},
		{"truncated header", good[:20], statsfile.ErrTruncated},
		{"truncated payload", good[:len(good)-10], statsfile.ErrTruncated},
		{"trailing bytes", append(bytes.Clone(good), 0), statsfile.ErrTruncated},
		{"payload bit", edit(func(b []byte) []byte { b[len(b)-statsfile.Trailer-5] ^= 1; return b }), statsfile.ErrChecksum},
		{"payload length", edit(func(b []byte) []byte { b[len(b)-statsfile.Trailer] ^= 1; return b }), statsfile.ErrChecksum},
		{"payload crc", edit(func(b []byte) []byte { b[len(b)-statsfile.Trailer+9] ^= 1; return b }), statsfile.ErrChecksum},
		{"header bit", edit(func(b []byte) []byte { b[20] ^= 1; return b }), statsfile.ErrChecksum},
	}
	for _, c := range cases {
		_, err := DecodeTopicStats(c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.stats")
	os.WriteFile(path, good[:len(good)-3], 0o644)
	if _, err := ReadTopicStats(path); !errors.Is(err, statsfile.ErrTruncated) || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadTopicStats of a truncated file: %v", err)
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
		edit  func(h *statsfile.Header)
	}{
		{"model", func(h *statsfile.Header) { h.Model = "topic" }},
		{"phase", func(h *statsfile.Header) { h.Phase = 2 }},
		{"d (vocabulary size)", func(h *statsfile.Header) { h.D = 31 }},
		{"k", func(h *statsfile.Header) { h.K = 4 }},
		{"alpha0", func(h *statsfile.Header) { h.Alpha0 = 0.5 }},
		{"seed", func(h *statsfile.Header) { h.Seed = 2 }},
		{"vocabulary", func(h *statsfile.Header) { h.VocabHash = statsfile.VocabHash(30, []string{"x"}) }},
		{"basis", func(h *statsfile.Header) { h.Basis = 12345 }},
	}
	for _, c := range incompatible {
		o, _ := testStats(t, 6)
		c.edit(&o.Header)
		err := a.Merge(o)
		var ie *statsfile.IncompatibleError
		if !errors.As(err, &ie) || ie.Field != c.field || !errors.Is(err, statsfile.ErrIncompatible) {
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

// FuzzDecodeTopicStats checks that no input makes the reader panic, and that what
// it accepts encodes back to a readable file.
func FuzzDecodeTopicStats(f *testing.F) {
	p1, p2 := testStats(f, 9)
	for _, s := range []*TopicStats{p1, p2, powerStats(f, 9)} {
		var buf bytes.Buffer
		if err := s.Encode(context.Background(), &buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeTopicStats(data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Encode(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeTopicStats(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	})
}

// cancelWriter cancels its context after its first write.
type cancelWriter struct {
	bytes.Buffer
	cancel func()
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// TestWriteStatsInterrupted checks that a write stopped by its context (as
// SIGINT stops the commands) leaves neither the file nor a temporary one,
// that Encode stops between chunks, and that a temporary file a killed
// writer left is removed by a later write once it is stale, and left alone
// while it may belong to a running one.
func TestWriteStatsInterrupted(t *testing.T) {
	p1, _ := testStats(t, 11)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.stats")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WriteTopicStats(ctx, path, p1); !errors.Is(err, context.Canceled) {
		t.Errorf("write with an ended context: %v", err)
	}
	var full bytes.Buffer
	if err := p1.Encode(context.Background(), &full); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	w := &cancelWriter{cancel: cancel}
	if err := p1.Encode(ctx, w); !errors.Is(err, context.Canceled) || w.Len() >= full.Len() {
		t.Errorf("encode cancelled after its first write: %v after %d of %d bytes", err, w.Len(), full.Len())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("interrupted writes left %d files", len(ents))
	}
	stale, fresh := filepath.Join(dir, ".s.stats.tmp-1"), filepath.Join(dir, ".s.stats.tmp-2")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * stream.StaleTemp)
	os.Chtimes(stale, old, old)
	if err := WriteTopicStats(context.Background(), path, p1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a stale temporary file was not removed")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a recent temporary file was removed")
	}
	if _, err := ReadTopicStats(path); err != nil {
		t.Error(err)
	}
}

// lows lists the batches and low words of exact totals (nil for none).
func lows(e *Exact) []any {
	if e == nil {
		return nil
	}
	out := []any{e.Batches}
	for _, a := range e.arrays {
		out = append(out, a.name, a.scale.exp, a.lo)
	}
	return out
}

// TestExactStatsMerge checks merges of statistics files with exact totals:
// the sum does not depend on the order, and plain with exact totals,
// totals of another resolution and files whose exact totals do not fit
// their accumulators are refused.
func TestExactStatsMerge(t *testing.T) {
	encode := func(s *TopicStats) []byte {
		var buf bytes.Buffer
		if err := s.Encode(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	decode := func(b []byte) *TopicStats {
		s, err := DecodeTopicStats(b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for phase := range 2 {
		pick := func(seed uint64) []byte {
			p1, p2 := testExactStats(t, seed)
			return encode([]*TopicStats{p1, p2}[phase])
		}
		a, b, c := pick(21), pick(22), pick(23)
		ab, ba := decode(a), decode(b)
		if err := ab.Merge(decode(b)); err != nil {
			t.Fatal(err)
		}
		if err := ab.Merge(decode(c)); err != nil {
			t.Fatal(err)
		}
		bc := decode(b)
		if err := bc.Merge(decode(c)); err != nil {
			t.Fatal(err)
		}
		if err := bc.Merge(decode(a)); err != nil {
			t.Fatal(err)
		}
		if err := ba.Merge(decode(c)); err != nil {
			t.Fatal(err)
		}
		if err := ba.Merge(decode(a)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encode(ab), encode(bc)) || !bytes.Equal(encode(ab), encode(ba)) {
			t.Errorf("phase %d: exact statistics merged in three orders differ", phase+1)
		}
		// The same merge streamed from files.
		dir := t.TempDir()
		for name, b := range map[string][]byte{"a": a, "b": b, "c": c} {
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		fm, err := ReadTopicStats(filepath.Join(dir, "c"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			if err := fm.MergeFile(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(encode(fm), encode(ab)) {
			t.Errorf("phase %d: statistics merged from files differ from the merge in memory", phase+1)
		}
		other, _ := testExactStats(t, 25)
		other.Header.Seed = 9
		os.WriteFile(filepath.Join(dir, "seed"), encode(other), 0o644)
		var ie0 *statsfile.IncompatibleError
		if err := decode(a).MergeFile(filepath.Join(dir, "seed")); phase == 0 && (!errors.As(err, &ie0) || ie0.Field != "seed") {
			t.Errorf("streamed merge of another seed: %v", err)
		}
		if ab.Exact.Batches != 3 || ab.Header.Shards != 3 {
			t.Errorf("phase %d: merged %d batches of %d shards, want 3 and 3", phase+1, ab.Exact.Batches, ab.Header.Shards)
		}

		// Plain totals with exact ones.
		p1, p2 := testStats(t, 24)
		var ie *statsfile.IncompatibleError
		if err := decode(a).Merge([]*TopicStats{p1, p2}[phase]); !errors.As(err, &ie) || ie.Field != "exact totals" {
			t.Errorf("phase %d: merge of exact and plain totals: %v", phase+1, err)
		}
		// Exact totals of another resolution.
		o := decode(b)
		o.Exact.arrays[1].scale = newFixedScale(o.Exact.arrays[1].scale.exp + 1)
		if err := decode(a).Merge(o); err == nil || !strings.Contains(err.Error(), "exact totals differ") {
			t.Errorf("phase %d: merge of another resolution: %v", phase+1, err)
		}
		os.WriteFile(filepath.Join(dir, "res"), encode(o), 0o644)
		if err := decode(a).MergeFile(filepath.Join(dir, "res")); err == nil || !strings.Contains(err.Error(), "exact totals differ") {
			t.Errorf("phase %d: streamed merge of another resolution: %v", phase+1, err)
		}
		// Low words that do not match their totals are not written, and a
		// file whose exact totals name other arrays is refused.
		o = decode(b)
		o.Exact.arrays[0].lo = o.Exact.arrays[0].lo[1:]
		if err := o.Encode(context.Background(), io.Discard); err == nil {
			t.Errorf("phase %d: low words of the wrong length written", phase+1)
		}
		o = decode(b)
		o.Exact.arrays[0].name += "x"
		if _, err := DecodeTopicStats(encode(o)); err == nil || !strings.Contains(err.Error(), "inconsistent") {
			t.Errorf("phase %d: exact totals of another array: %v", phase+1, err)
		}
	}
}
