package stream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
)

// failingFile is a spill file that fails its writes after limit bytes, as a
// full disk does.
type failingFile struct {
	*os.File
	limit int
}

func (f *failingFile) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		return 0, errors.New("no space left on device")
	}
	f.limit -= len(p)
	return f.File.Write(p)
}

// unsortedDocs holds documents whose term ids go down as well as up, with
// the extreme int32 values, empty documents and large counts: every value
// the encoding can meet.
func unsortedDocs() *MemoryDocs {
	all := &Docs{Offsets: []int{0}}
	for i := range 50 {
		switch i % 4 {
		case 0:
			all.EndDoc()
		case 1:
			all.AppendDoc([]int32{math.MaxInt32, 0, 17, 3}, []int32{1, math.MaxInt32, 0, 2})
		default:
			all.AppendDoc([]int32{int32(1000 - i), int32(i), int32(5 * i)}, []int32{int32(i), 1, 300})
		}
	}
	return &MemoryDocs{All: all, BatchRows: 6}
}

// collectPass copies every batch of one pass.
func collectPass(t *testing.T, src DocSource) []*Docs {
	t.Helper()
	var out []*Docs
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Clone())
		b.Release()
	}
	return out
}

func equalPasses(a, b []*Docs) bool {
	return slices.EqualFunc(a, b, func(x, y *Docs) bool {
		return x.Start == y.Start && slices.Equal(x.Offsets, y.Offsets) && slices.Equal(x.Terms, y.Terms) && slices.Equal(x.Counts, y.Counts)
	})
}

// Term ids in any order and counts up to MaxInt32 come back from the spill
// file as they went in.
func TestSpillRoundTrip(t *testing.T) {
	src := unsortedDocs()
	want := collectPass(t, src)
	sp := Spill(src, SpillOptions{Dir: t.TempDir(), Workers: 3})
	defer sp.Close()
	for pass := 1; pass <= 2; pass++ {
		if got := collectPass(t, sp); !equalPasses(got, want) {
			t.Fatalf("pass %d differs from the source", pass)
		}
	}
	if ok, _ := sp.Spilled(); !ok {
		t.Fatal("no spill file after a complete pass")
	}
}

// A write that fails in the middle of the first pass (a full disk) gives
// one warning and no spill file; that pass and the later ones deliver the
// source's batches, and no file is left.
func TestSpillWriteFailure(t *testing.T) {
	for _, buffer := range []int{16, 1 << 20} {
		t.Run(fmt.Sprintf("buffer=%d", buffer), func(t *testing.T) { testSpillWriteFailure(t, buffer) })
	}
}

// testSpillWriteFailure fails the spill's writes after 100 bytes, with a
// write buffer of the given size: a small one meets the error in the middle
// of the pass, a large one when the pass's end flushes it.
func testSpillWriteFailure(t *testing.T, buffer int) {
	defer func(b int) { spillBuffer = b }(spillBuffer)
	spillBuffer = buffer
	dir := t.TempDir()
	create := spillCreate
	defer func() { spillCreate = create }()
	spillCreate = func(dir string) (spillFile, error) {
		f, err := create(dir)
		if err != nil {
			return nil, err
		}
		return &failingFile{File: f.(*os.File), limit: 100}, nil
	}
	src := unsortedDocs()
	want := collectPass(t, src)
	var warnings []error
	sp := Spill(src, SpillOptions{Dir: dir, Warn: func(err error) { warnings = append(warnings, err) }})
	defer sp.Close()
	for pass := 1; pass <= 3; pass++ {
		if got := collectPass(t, sp); !equalPasses(got, want) {
			t.Fatalf("pass %d differs from the source", pass)
		}
		if ok, _ := sp.Spilled(); ok {
			t.Fatalf("pass %d: a failed write left a spill file in use", pass)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("%d warnings, want 1: %v", len(warnings), warnings)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Fatalf("%d files left in the spill directory", len(es))
	}
}

// A damaged record is reported as corrupt, not decoded into wrong batches.
func TestSpillCorruptRecord(t *testing.T) {
	var w spillWriter
	b := NewDocs(5)
	b.AppendDoc([]int32{3, 1}, []int32{2, 200})
	b.AppendDoc(nil, nil)
	b.EndDoc()
	p := w.encode(b)
	docs := NewFreeList(1)
	got, err := decodeSpill(p, docs)
	if err != nil || got.Start != 5 || !slices.Equal(got.Offsets, b.Offsets) || !slices.Equal(got.Terms, b.Terms) || !slices.Equal(got.Counts, b.Counts) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for cut := range len(p) {
		if _, err := decodeSpill(p[:cut], docs); err == nil {
			t.Fatalf("a record cut at %d of %d bytes decoded", cut, len(p))
		}
	}
}

// FuzzSpillRecord: any bytes either decode or give an error, never a panic
// or a batch that breaks the CSR invariants; a batch built from the bytes
// encodes and decodes back to itself.
func FuzzSpillRecord(f *testing.F) {
	var w spillWriter
	for _, src := range []*MemoryDocs{unsortedDocs()} {
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				f.Fatal(err)
			}
			f.Add(slices.Clone(w.encode(b)))
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 0})
	docs := NewFreeList(1)
	f.Fuzz(func(t *testing.T, p []byte) {
		if b, err := decodeSpill(p, docs); err == nil {
			if b.Offsets[0] != 0 || b.Offsets[b.Len()] != len(b.Terms) || len(b.Terms) != len(b.Counts) {
				t.Fatalf("decoded a malformed batch from %x", p)
			}
			b.Release()
		}
		// Read the bytes as int32 pairs into documents of up to 3 entries.
		b := docs.Get(int64(len(p)))
		for i := 0; i+8 <= len(p); i += 8 {
			b.Add(int32(binary.LittleEndian.Uint32(p[i:])), int32(binary.LittleEndian.Uint32(p[i+4:])))
			if i%24 == 16 {
				b.EndDoc()
			}
		}
		b.EndDoc()
		want := b.Clone()
		b.Release()
		got, err := decodeSpill(w.encode(want), docs)
		if err != nil || !equalPasses([]*Docs{got}, []*Docs{want}) {
			t.Fatalf("round trip of %v: %v, %v", want, got, err)
		}
		got.Release()
	})
}

// Passes running at the same time all deliver the source's batches; one of
// them writes the spill file, which the pass after them reads.
func TestSpillConcurrentPasses(t *testing.T) {
	src := unsortedDocs()
	want := collectPass(t, src)
	sp := Spill(src, SpillOptions{Dir: t.TempDir(), Workers: 2})
	defer sp.Close()
	got := make([][]*Docs, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			for b, err := range sp.Docs(context.Background()) {
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = append(got[i], b.Clone())
				b.Release()
			}
		})
	}
	wg.Wait()
	for i := range got {
		if !equalPasses(got[i], want) {
			t.Fatalf("concurrent pass %d differs from the source", i)
		}
	}
	if ok, _ := sp.Spilled(); !ok {
		t.Fatal("no spill file after the concurrent passes")
	}
	if !equalPasses(collectPass(t, sp), want) {
		t.Fatal("the pass over the spill differs from the source")
	}
}
