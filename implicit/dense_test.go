package implicit

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
)

// Wide totals are exact: any grouping and order of the same partials gives
// the same limbs, and the total rounds to the float64 nearest the exact sum
// of the truncated partials (checked with math/big).
func TestWideSumsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	parts := make([]float64, 500)
	for i := range parts {
		// Magnitudes from 1e-12 to 1e12, both signs: cancellation included.
		parts[i] = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(25)-12))
	}
	exact := new(big.Float).SetPrec(2000)
	for _, v := range parts {
		tv := new(big.Float).SetPrec(2000).SetMantExp(big.NewFloat(math.Trunc(math.Ldexp(v, wideFrac))), -wideFrac)
		exact.Add(exact, tv)
	}
	want, _ := exact.Float64()
	sum := func(order []int, groups int) *WideSums {
		total := NewWideSums("x", 1)
		for g := range groups {
			part := NewWideSums("x", 1)
			for i, j := range order {
				if i%groups == g {
					if err := part.Add([]float64{parts[j]}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := total.Merge(part); err != nil {
				t.Fatal(err)
			}
		}
		return total
	}
	ref := sum(r.Perm(len(parts)), 1)
	if got := ref.Floats()[0]; got != want {
		t.Errorf("total %v, exact sum of the truncated partials %v", got, want)
	}
	for _, groups := range []int{2, 3, 7} {
		if s := sum(r.Perm(len(parts)), groups); !equalLimbs(s, ref) {
			t.Errorf("%d groups in another order: limbs %v, want %v", groups, s.t, ref.t)
		}
	}
}

func equalLimbs(a, b *WideSums) bool {
	if len(a.t) != len(b.t) {
		return false
	}
	for i := range a.t {
		if a.t[i] != b.t[i] {
			return false
		}
	}
	return true
}

// Partials that are not finite or too large, and totals that leave the
// range, are refused.
func TestWideSumsRange(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -1e30} {
		if err := NewWideSums("x", 1).Add([]float64{v}); !errors.Is(err, ErrWideRange) {
			t.Errorf("partial %v: got %v", v, err)
		}
	}
	s := NewWideSums("x", 1)
	var err error
	for i := 0; i < 1<<12 && err == nil; i++ {
		err = s.Add([]float64{1e25})
	}
	if !errors.Is(err, ErrWideRange) {
		t.Errorf("a total beyond 2^94: got %v", err)
	}
	// Below the resolution a partial adds nothing; tiny ones are kept to it.
	s = NewWideSums("x", 1)
	if s.Add([]float64{1e-40}); s.Floats()[0] != 0 {
		t.Errorf("1e-40 added %v", s.Floats()[0])
	}
	if s.Add([]float64{-3e-20}); math.Abs(s.Floats()[0]+3e-20) > 1e-28 {
		t.Errorf("-3e-20 gave %v", s.Floats()[0])
	}
}

// testPass sums x and x² of the rows.
func testPass() *Pass {
	return &Pass{
		Header: statsfile.Header{Model: "test", Phase: 1, D: 2, K: 1},
		Sums:   []SumShape{{Name: "x", Len: 2}, {Name: "xx", Len: 2}},
		Fixed:  []Fixed{{Name: "basis", Values: []float64{0.5, 2}}},
		Worker: func() BatchFunc {
			return func(b *stream.Dense, out [][]float64, _ func() error) error {
				for i := range b.Rows {
					for j, v := range b.Row(i) {
						out[0][j] += v
						out[1][j] += v * v
					}
				}
				return nil
			}
		},
	}
}

func denseRows(n, batch int, seed uint64) *stream.MemoryDense {
	r := rand.New(rand.NewPCG(seed, 1))
	all := &stream.Dense{Rows: n, Cols: 2}
	for range 2 * n {
		all.Data = append(all.Data, r.NormFloat64()*1e3)
	}
	return &stream.MemoryDense{All: all, BatchRows: batch}
}

// The statistics of a pass do not depend on the number of workers; shards
// merged in either order equal the whole; a written file reads back
// identical; merges refuse another basis, other settings and shared inputs.
func TestDenseStatsMergeAndFile(t *testing.T) {
	ctx := context.Background()
	p := testPass()
	src := denseRows(1000, 64, 3)
	whole, err := p.Run(ctx, src.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	w3, err := p.Run(ctx, src.Rows, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStats(t, whole, w3) {
		t.Error("1 and 3 workers give different statistics")
	}
	// Shards at batch boundaries: rows [0, 640) and [640, 1000).
	a, b := denseRows(1000, 64, 3), denseRows(1000, 64, 3)
	a.All.Rows, a.All.Data = 640, a.All.Data[:1280]
	b.All.Rows, b.All.Data = 360, b.All.Data[1280:]
	sa, _ := p.Run(ctx, a.Rows, 2)
	sb, _ := p.Run(ctx, b.Rows, 1)
	sa.Header.Inputs = []statsfile.Input{{Path: "f", Fingerprint: "1", Docs: &[2]int64{0, 640}}}
	sb.Header.Inputs = []statsfile.Input{{Path: "f", Fingerprint: "1", Docs: &[2]int64{640, 1000}}}
	ab, ba := clone(t, sa), clone(t, sb)
	if err := ab.Merge(sb); err != nil {
		t.Fatal(err)
	}
	if err := ba.Merge(sa); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, ab), encode(t, ba)) {
		t.Error("merges in either order differ")
	}
	ab.Header.Inputs, ab.Header.Shards = nil, 1
	if !equalStats(t, ab, whole) {
		t.Error("merged shards differ from the whole")
	}
	if err := clone(t, sa).Merge(sa); !errors.Is(err, statsfile.ErrOverlap) {
		t.Errorf("merging a shard with itself: %v", err)
	}
	other := testPass()
	other.Fixed[0].Values[1] = 3
	so, _ := other.Run(ctx, b.Rows, 1)
	if err := clone(t, sa).Merge(so); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("another basis: %v", err)
	}
	sp := clone(t, sb)
	sp.Header.Params = []byte(`{"a":1}`)
	if err := clone(t, sa).Merge(sp); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("other settings: %v", err)
	}

	path := filepath.Join(t.TempDir(), "s.stats")
	if err := WriteDenseStats(ctx, path, whole); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDenseStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStats(t, back, whole) || back.Get("basis")[1] != 2 {
		t.Error("the file does not read back as written")
	}
	if m, err := statsfile.PeekModel(path); err != nil || m != "test" {
		t.Errorf("PeekModel: %q, %v", m, err)
	}
	if _, err := ReadTopicStats(path); !errors.Is(err, statsfile.ErrModel) {
		t.Errorf("reading dense statistics as LDA's: %v", err)
	}
	data, _ := os.ReadFile(path)
	data[len(data)-30] ^= 0xff
	os.WriteFile(path, data, 0o644)
	if _, err := ReadDenseStats(path); !errors.Is(err, statsfile.ErrChecksum) {
		t.Errorf("a damaged file: %v", err)
	}
}

func encode(t *testing.T, s *DenseStats) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Encode(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func equalStats(t *testing.T, a, b *DenseStats) bool {
	t.Helper()
	return bytes.Equal(encode(t, a), encode(t, b))
}

func clone(t *testing.T, s *DenseStats) *DenseStats {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Encode(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	c, err := DecodeDenseStats(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecodeDenseStatsRefusesDamage checks that statistics decoded from
// memory pass the file's checks: a flipped byte or a cut is an error.
func TestDecodeDenseStatsRefusesDamage(t *testing.T) {
	st, err := testPass().Run(context.Background(), denseRows(300, 64, 3).Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := encode(t, st)
	if !bytes.Equal(encode(t, clone(t, st)), b) {
		t.Error("encode, decode and encode again changes the bytes")
	}
	for i := range b {
		if i%7 != 0 {
			continue
		}
		bad := bytes.Clone(b)
		bad[i] ^= 0x40
		if _, err := DecodeDenseStats(bad); err == nil {
			t.Fatalf("byte %d of %d flipped: no error", i, len(b))
		}
	}
	if _, err := DecodeDenseStats(b[:len(b)-1]); err == nil {
		t.Error("statistics cut short: no error")
	}
}
