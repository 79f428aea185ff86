package solver

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// genPass is a RowPass that generates n rows of three noisy views of a
// k-component mixture batch by batch from a seed, holding only one batch:
// the stand-in for a file streamed from disk. Every pass yields the same rows.
func genPass(a, b, c *mat.Dense, n, batch int, seed uint64, peak *uint64) RowPass {
	d1, k := a.Dims()
	d2, _ := b.Dims()
	d3, _ := c.Dims()
	return func(ctx context.Context, fn func(*mat.Dense) error) error {
		rows := mat.NewDense(batch, d1+d2+d3, nil)
		rng := rand.New(rand.NewPCG(seed, 1))
		var ms runtime.MemStats
		for s := 0; s < n; s += batch {
			m := min(batch, n-s)
			for l := 0; l < m; l++ {
				h := (s + l) % k
				row := rows.RawRowView(l)
				for i := 0; i < d1; i++ {
					row[i] = a.At(i, h) + 0.05*rng.NormFloat64()
				}
				for i := 0; i < d2; i++ {
					row[d1+i] = b.At(i, h) + 0.05*rng.NormFloat64()
				}
				for i := 0; i < d3; i++ {
					row[d1+d2+i] = c.At(i, h) + 0.05*rng.NormFloat64()
				}
			}
			if err := fn(rows.Slice(0, m, 0, d1+d2+d3).(*mat.Dense)); err != nil {
				return err
			}
			if peak != nil {
				runtime.ReadMemStats(&ms)
				*peak = max(*peak, ms.HeapAlloc)
			}
		}
		return nil
	}
}

// collect materialises every row of a pass (for the in-memory reference).
func collect(ctx context.Context, pass RowPass) *mat.Dense {
	var all *mat.Dense
	_ = pass(ctx, func(rows *mat.Dense) error {
		if all == nil {
			all = mat.DenseCopyOf(rows)
			return nil
		}
		r, c := all.Dims()
		b, _ := rows.Dims()
		next := mat.NewDense(r+b, c, nil)
		next.Slice(0, r, 0, c).(*mat.Dense).Copy(all)
		next.Slice(r, r+b, 0, c).(*mat.Dense).Copy(rows)
		all = next
		return nil
	})
	return all
}

// Streaming the views (RowViews over a generating pass) gives exactly the
// in-memory answer (DenseViews with the same batches): same sums in the same
// order, so Alt and CP-ALS agree bit for bit.
func TestStreamingViewsEqualInMemory(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(60, 61))
	d, k, n, batch := 12, 3, 2000, 300
	a, b, c := unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)
	pass := genPass(a, b, c, n, batch, 7, nil)
	streamed := SampleTensor{RowViews{D1: d, D2: d, D3: d, Pass: pass}}
	all := collect(ctx, pass)
	inMem := SampleTensor{DenseViews{X1: all.Slice(0, n, 0, d).(*mat.Dense), X2: all.Slice(0, n, d, 2*d).(*mat.Dense),
		X3: all.Slice(0, n, 2*d, 3*d).(*mat.Dense), Batch: batch}}
	opt := Options{Seed: 3, Restarts: 30}
	s, err := Alt(ctx, streamed, k, opt, DefaultAltOptions())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Alt(ctx, inMem, k, opt, DefaultAltOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(s.A, m.A) || !mat.Equal(s.B, m.B) || !mat.Equal(s.C, m.C) || s.W[0] != m.W[0] {
		t.Fatal("streamed and in-memory Alt differ")
	}
	for name, pair := range map[string][2]*mat.Dense{"a": {a, s.A}, "b": {b, s.B}, "c": {c, s.C}} {
		_, dist := MatchColumns(pair[0], pair[1])
		for i, x := range dist {
			// View noise 0.05 per coordinate, n/k ≈ 667 rows per component.
			if !(x < 0.02) {
				t.Fatalf("view %s factor %d distance %v", name, i, x)
			}
		}
	}
	als1, err := CPALS(ctx, streamed, k, nil, Options{Seed: 2, Iters: 50})
	if err != nil {
		t.Fatal(err)
	}
	als2, err := CPALS(ctx, inMem, k, nil, Options{Seed: 2, Iters: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(als1.A, als2.A) || !mat.Equal(als1.C, als2.C) {
		t.Fatal("streamed and in-memory CP-ALS differ")
	}
}

// The peak heap of a streamed solve does not grow with the number of rows:
// four times the rows, same peak (within GC slack).
func TestStreamingMemoryIndependentOfRows(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(62, 63))
	d, k, batch := 30, 4, 500
	a, b, c := unitFactors(d, k, rng), unitFactors(d, k, rng), unitFactors(d, k, rng)
	peakOf := func(n int) uint64 {
		var peak uint64
		runtime.GC()
		st := SampleTensor{RowViews{D1: d, D2: d, D3: d, Pass: genPass(a, b, c, n, batch, 9, &peak)}}
		if _, err := CPALS(ctx, st, k, nil, Options{Seed: 1, Iters: 3}); err != nil {
			t.Fatal(err)
		}
		return peak
	}
	small, large := peakOf(20000), peakOf(80000)
	t.Logf("peak heap: n=20000 %d KB, n=80000 %d KB", small/1024, large/1024)
	// The rows alone at n = 80000 take 80000·90·8 B = 57 MB; the pass holds 360 KB.
	if float64(large) > 1.5*float64(small)+4<<20 {
		t.Fatalf("peak heap grew with rows: %d → %d bytes", small, large)
	}
}
