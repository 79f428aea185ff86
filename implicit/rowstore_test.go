package implicit_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// rowAcc runs the fixture's pass into a RowAcc split over two workers'
// stores (merged, as a pass would).
func (f *ldaFixture) rowAcc(t testing.TB, opt implicit.RowStoreOptions) *implicit.RowAcc {
	t.Helper()
	d, _ := f.w.Dims()
	dir := t.TempDir()
	var accs [2]*implicit.RowAcc
	for i := range accs {
		a, err := implicit.NewRowAcc(d, f.k, dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		accs[i] = a
	}
	i := 0
	eachBatch(t, f.src, func(b *stream.Docs) {
		if err := accs[i%2].Add(b, f.w); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if err := accs[0].Merge(accs[1]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accs[0].Close() })
	return accs[0]
}

// rowTensor is the LDA-corrected operator over the stored rows.
func (f *ldaFixture) rowTensor(t testing.TB, acc *implicit.RowAcc) solver.Tensor {
	t.Helper()
	op, err := acc.Operator(f.w)
	if err != nil {
		t.Fatal(err)
	}
	mom, err := acc.Moments(f.w, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &implicit.Corrected{T: op, C: *f.correction(mom.M1, mom.E2)}
}

// TestRowOperatorMatchesExplicit: with float64 chunks the streamed operator
// (rows from disk plus the aggregated Z, G3 terms, plus the LDA correction)
// equals the explicit packed tensor's contraction to rounding; float32
// chunks stay within float32 rounding.
func TestRowOperatorMatchesExplicit(t *testing.T) {
	f := newLDAFixture(t, 3000, 60, 6, 30, 12)
	exp := f.explicit(t)
	for _, c := range []struct {
		opt implicit.RowStoreOptions
		tol float64
	}{
		{implicit.RowStoreOptions{Float64: true, ChunkRows: 257, Workers: 2}, 1e-9},
		{implicit.RowStoreOptions{ChunkRows: 1000, Workers: 3}, 1e-5},
	} {
		acc := f.rowAcc(t, c.opt)
		if acc.Store.Chunks() < 3 {
			t.Fatalf("only %d chunks: the test must span several", acc.Store.Chunks())
		}
		rt := f.rowTensor(t, acc)
		e, norm := maxColErr(t, rt, exp, 25, 2)
		t.Logf("float64=%v: max column error %.3g relative to %.3g (%d rows, %d chunks, %d bytes)", c.opt.Float64, e, norm, acc.Store.Rows(), acc.Store.Chunks(), acc.Store.Bytes())
		if e > c.tol*norm {
			t.Errorf("float64=%v: streamed operator differs from the explicit tensor by %.3g (relative %.3g > %g)", c.opt.Float64, e, e/norm, c.tol)
		}
		// Two calls give identical results (fixed chunk → worker assignment).
		theta := randomBlock(f.k, 7, 3)
		a, b := mat.NewDense(f.k, 7, nil), mat.NewDense(f.k, 7, nil)
		if err := rt.Apply(context.Background(), a, theta); err != nil {
			t.Fatal(err)
		}
		if err := rt.Apply(context.Background(), b, theta); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a, b) {
			t.Error("two Apply calls differ")
		}
	}
}

// TestRowOperatorRecoversTopics decomposes the streamed operator: the result
// must be the explicit path's.
func TestRowOperatorRecoversTopics(t *testing.T) {
	f := newLDAFixture(t, 8000, 80, 5, 50, 31)
	exp := f.meanL1(t, decompose(t, f.explicit(t), f.k))
	got := f.meanL1(t, decompose(t, f.rowTensor(t, f.rowAcc(t, implicit.RowStoreOptions{})), f.k))
	t.Logf("mean ℓ1: explicit %.5f, on-disk rows (float32) %.5f", exp, got)
	if math.Abs(got-exp) > 1e-4 {
		t.Errorf("on-disk mean ℓ1 %.5f differs from explicit %.5f", got, exp)
	}
}

func TestRowStoreCorruptChunk(t *testing.T) {
	f := newLDAFixture(t, 2000, 40, 4, 20, 5)
	for _, damage := range []string{"flip", "truncate"} {
		acc := f.rowAcc(t, implicit.RowStoreOptions{ChunkRows: 300})
		op, err := acc.Operator(f.w)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(acc.Store.Dir(), "rows.zst")
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		switch damage {
		case "flip":
			fh, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			if _, err := fh.ReadAt(buf, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			for i := range buf {
				buf[i] ^= 0x5a
			}
			if _, err := fh.WriteAt(buf, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			fh.Close()
		case "truncate":
			if err := os.Truncate(path, st.Size()-10); err != nil {
				t.Fatal(err)
			}
		}
		err = op.Apply(context.Background(), mat.NewDense(4, 2, nil), randomBlock(4, 2, 1))
		if !errors.Is(err, implicit.ErrCorruptChunk) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chunk ") {
			t.Errorf("%s: Apply error %v, want ErrCorruptChunk naming %s and the chunk", damage, err, path)
		}
	}
}

func TestRowStoreCloseRemovesFiles(t *testing.T) {
	parent := t.TempDir()
	a, err := implicit.NewRowStore(parent, 3, implicit.RowStoreOptions{ChunkRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := implicit.NewRowStore(parent, 3, implicit.RowStoreOptions{ChunkRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	rows := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	inv := []float64{0.1, 0.2, 0.3}
	for _, s := range []*implicit.RowStore{a, b} {
		if err := s.Append(rows, inv); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // fn runs on several workers at once
	var got []float64
	err = a.Scan(context.Background(), func(_ int, y *mat.Dense, _ []float64) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, y.RawMatrix().Data...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows() != 6 || a.Chunks() != 4 || len(got) != 18 {
		t.Errorf("merged store: %d rows, %d chunks, %d values scanned; want 6, 4, 18", a.Rows(), a.Chunks(), len(got))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("Close left %d entries in %s", len(ents), parent)
	}
	if err := a.Append(rows, inv); err == nil {
		t.Error("Append after Close succeeded")
	}
}

// peakHeap runs fn while sampling the heap every 100µs (with a low GC
// target so the heap stays close to the live data) and returns the peak
// above the live heap before the call.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	return peak.Load() - min(base, peak.Load())
}

// TestRowStoreMemoryFlat: the peak heap of a pass into a RowAcc plus three
// operator calls must not grow with the number of documents (the rows are on
// disk); 4× the documents may cost at most 15% (plus 1 MiB for sampling
// noise) more heap, comparing the least peak of three runs of each size.
func TestRowStoreMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("memory measurement skipped with -short")
	}
	run := func(docs int64) uint64 {
		f := newLDAFixture(t, docs, 300, 10, 40, 8)
		return peakHeap(func() {
			acc := f.rowAcc(t, implicit.RowStoreOptions{ChunkRows: 512})
			op, err := acc.Operator(f.w)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := op.Apply(context.Background(), mat.NewDense(10, 20, nil), randomBlock(10, 20, uint64(i))); err != nil {
					t.Fatal(err)
				}
			}
			acc.Close()
		})
	}
	// The least of three runs per size: the sampled peak depends on when
	// the collector runs, which a loaded machine (CI beside other jobs)
	// delays, and a delay only adds to the peak.
	least := func(docs int64) uint64 { return min(run(docs), run(docs), run(docs)) }
	small, large := least(10000), least(40000)
	t.Logf("peak heap: %d docs %.2f MiB, %d docs %.2f MiB", 10000, float64(small)/(1<<20), 40000, float64(large)/(1<<20))
	if float64(large) > 1.15*float64(small)+(1<<20) {
		t.Errorf("peak heap grew from %.2f MiB to %.2f MiB with 4× the documents", float64(small)/(1<<20), float64(large)/(1<<20))
	}
}
