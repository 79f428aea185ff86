package implicit

import (
	"context"
	"errors"
	"iter"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// batches splits docs into batches of size rows, as a source would deliver
// them; failAt ≥ 0 makes the pass fail instead of yielding batch failAt.
func batches(docs *stream.Docs, rows, failAt int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			for i, lo := 0, 0; lo < docs.Len(); i, lo = i+1, lo+rows {
				if i == failAt {
					yield(nil, errBroken)
					return
				}
				b := &stream.Docs{Start: int64(lo), Offsets: []int{0}}
				for j := lo; j < min(lo+rows, docs.Len()); j++ {
					b.AppendDoc(docs.Doc(j))
				}
				if !yield(b, nil) {
					return
				}
			}
		}
	}
}

var errBroken = errors.New("broken source")

// TestPassIndependentOfWorkers checks that a pass gives bit-identical sums
// for any number of workers, and equals adding the batches one by one.
func TestPassIndependentOfWorkers(t *testing.T) {
	const d, k = 60, 6
	docs, _ := tinyCorpus(3000, d, 21)
	w := randDense(d, k, 22)
	omega := randDense(d, k+3, 23)
	serialP, serialT := NewPairAcc(d, k+3), NewTripleAcc(d, k)
	serialT.KeepRows = true
	for b, err := range batches(docs, 97, -1)(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		serialP.Add(b, omega)
		serialT.Add(b, w)
	}
	for _, workers := range []int{1, 2, 3, 8} {
		p, tr := NewPairAcc(d, k+3), NewTripleAcc(d, k)
		tr.KeepRows = true
		var seen int
		if err := p.Pass(context.Background(), batches(docs, 97, -1), workers, omega, func(n int) { seen += n }); err != nil {
			t.Fatal(err)
		}
		if err := tr.Pass(context.Background(), batches(docs, 97, -1), workers, w, nil); err != nil {
			t.Fatal(err)
		}
		if seen != docs.Len() {
			t.Errorf("workers=%d: progress saw %d documents, want %d", workers, seen, docs.Len())
		}
		if p.Counts != serialP.Counts || !slices.Equal(p.M1, serialP.M1) || !slices.Equal(p.E2Omega, serialP.E2Omega) {
			t.Errorf("workers=%d: pair sums differ from the serial ones", workers)
		}
		for name, pair := range map[string][2][]float64{
			"Y3": {tr.Y3, serialT.Y3}, "Z": {tr.Z, serialT.Z}, "Z2": {tr.Z2, serialT.Z2}, "G2": {tr.G2, serialT.G2},
			"G3": {tr.G3, serialT.G3}, "M1": {tr.M1, serialT.M1}, "rows": {tr.Rows, serialT.Rows}, "inv_n3": {tr.InvN3, serialT.InvN3},
		} {
			if !slices.Equal(pair[0], pair[1]) {
				t.Errorf("workers=%d: %s differs from the serial sums", workers, name)
			}
		}
	}
}

// TestPassError checks that a source failing mid-pass ends the pass with its
// error (no worker waits forever for a batch that never comes), and that
// cancellation stops it.
func TestPassError(t *testing.T) {
	const d, k = 30, 4
	docs, _ := tinyCorpus(2000, d, 24)
	for _, workers := range []int{1, 2, 4} {
		done := make(chan error, 1)
		go func() {
			acc := NewTripleAcc(d, k)
			done <- acc.Pass(context.Background(), batches(docs, 50, 7), workers, randDense(d, k, 25), nil)
		}()
		select {
		case err := <-done:
			if !errors.Is(err, errBroken) {
				t.Errorf("workers=%d: pass over a broken source returned %v", workers, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("workers=%d: pass over a broken source did not return", workers)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	acc := NewPairAcc(d, k)
	if err := acc.Pass(ctx, batches(docs, 50, -1), 2, randDense(d, k, 26), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled pass returned %v", err)
	}
}

// TestFloat32Partials checks that float32 batch partials give the float64
// sums to float32 rounding (relative 1e-5 of the largest entry: sums of a few
// hundred terms of relative error 6e-8), and stay independent of workers.
func TestFloat32Partials(t *testing.T) {
	const d, k = 60, 6
	docs, _ := tinyCorpus(3000, d, 27)
	w := randDense(d, k, 28)
	omega := randDense(d, k+3, 29)
	run := func(f32 bool, workers int) (*PairAcc, *TripleAcc) {
		p, tr := NewPairAcc(d, k+3), NewTripleAcc(d, k)
		p.Float32, tr.Float32 = f32, f32
		if err := p.Pass(context.Background(), batches(docs, 97, -1), workers, omega, nil); err != nil {
			t.Fatal(err)
		}
		if err := tr.Pass(context.Background(), batches(docs, 97, -1), workers, w, nil); err != nil {
			t.Fatal(err)
		}
		return p, tr
	}
	p64, t64 := run(false, 2)
	p32, t32 := run(true, 2)
	p32b, t32b := run(true, 3)
	for name, c := range map[string][3][]float64{
		"E2Ω": {p32.E2Omega, p64.E2Omega, p32b.E2Omega}, "Y3": {t32.Y3, t64.Y3, t32b.Y3},
		"Z": {t32.Z, t64.Z, t32b.Z}, "Z2": {t32.Z2, t64.Z2, t32b.Z2},
	} {
		scale := 0.0
		for _, v := range c[1] {
			scale = max(scale, math.Abs(v))
		}
		for i := range c[0] {
			if !near(c[0][i], c[1][i], 1e-5, scale) {
				t.Fatalf("%s[%d]: float32 partials %g, float64 %g", name, i, c[0][i], c[1][i])
			}
		}
		if !slices.Equal(c[0], c[2]) {
			t.Errorf("%s: float32 sums differ between 2 and 3 workers", name)
		}
	}
}

// TestSplitBatches checks the pieces a pass cuts batches into: the same
// documents in order, with their indices, none over the limit unless alone.
func TestSplitBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	const d, n = 400, 4000
	all := stream.NewDocs(0)
	for i := range n {
		m := 1 + r.IntN(160)
		if i == 17 {
			m = d // one document over the limit below
		}
		for _, w := range r.Perm(d)[:m] {
			all.Add(int32(w), int32(1+r.IntN(3)))
		}
		all.EndDoc()
	}
	whole := &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: n}
	const limit = 350
	next := 0
	for b, err := range SplitBatches(whole.Docs, limit)(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Start != int64(next) {
			t.Fatalf("a piece starts at document %d after %d documents", b.Start, next)
		}
		if b.NNZ() > limit && b.Len() != 1 {
			t.Fatalf("a piece of %d documents has %d entries, over %d", b.Len(), b.NNZ(), limit)
		}
		for i := range b.Len() {
			gt, gc := b.Doc(i)
			wt, wc := all.Doc(next + i)
			if !reflect.DeepEqual(gt, wt) || !reflect.DeepEqual(gc, wc) {
				t.Fatalf("document %d differs in its piece", next+i)
			}
		}
		next += b.Len()
		b.Release()
	}
	if next != n {
		t.Fatalf("the pieces hold %d documents, want %d", next, n)
	}
}
