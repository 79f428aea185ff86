package sketchbench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

func gate(t *testing.T) {
	if os.Getenv("STREAMFIT_BENCH") == "" {
		t.Skip("set STREAMFIT_BENCH=1 to run the experiments")
	}
}

const mib = 1 << 20

// size formats a byte count in KiB or MiB.
func size(n int64) string {
	if n < mib {
		return fmt.Sprintf("%.0f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}

// setup is one corpus and the representations tried on it.
type setup struct {
	k, d     int
	docs     int64
	docLen   float64
	sketches []implicit.SketchConfig
	opt      solver.Options
}

var setups = []setup{
	{k: 10, d: 1000, docs: 20000, docLen: 100, opt: solver.Options{Seed: 1},
		sketches: []implicit.SketchConfig{{Len: 1 << 10, Count: 1}, {Len: 1 << 10, Count: 3}, {Len: 1 << 12, Count: 3}, {Len: 1 << 14, Count: 3}}},
	{k: 50, d: 2000, docs: 50000, docLen: 100, opt: solver.Options{Seed: 1, Restarts: 20, Iters: 15},
		sketches: []implicit.SketchConfig{{Len: 1 << 12, Count: 3}, {Len: 1 << 14, Count: 3}}},
	// At k=100 the solve is skipped (Iters < 0): RTPM's k·(2N+2) contractions
	// take minutes per representation here; the table keeps pass cost, memory
	// and the contraction error.
	{k: 100, d: 3000, docs: 60000, docLen: 150, opt: solver.Options{Seed: 1, Iters: -1},
		sketches: []implicit.SketchConfig{{Len: 1 << 14, Count: 1}, {Len: 1 << 16, Count: 1}}},
}

// TestRepresentations fits each corpus with every representation of the
// third moment and prints one Markdown table (STREAMFIT_BENCH_K=50 runs one k).
func TestRepresentations(t *testing.T) {
	gate(t)
	ctx := context.Background()
	var sb strings.Builder
	sb.WriteString("| k | representation | pass s | solve s | held | peak RSS Δ | rel. err T(I,θ,θ) | mean ℓ1 | max ℓ1 | found |\n|---|---|---|---|---|---|---|---|---|---|\n")
	only := os.Getenv("STREAMFIT_BENCH_K")
	for _, s := range setups {
		if only != "" && only != fmt.Sprint(s.k) {
			continue
		}
		c, err := NewCorpus(s.docs, s.d, s.k, s.docLen, 42, 2)
		if err != nil {
			t.Fatal(err)
		}
		row := func(o *Outcome, held string) {
			fmt.Fprintf(&sb, "| %d | %s | %.2f | %.2f | %s | %.0f MiB | %.3g | %.4f | %.4f | %d/%d |\n",
				s.k, o.Name, o.Pass.Seconds(), o.Solve.Seconds(), held, float64(o.PeakRSS)/mib, o.RelErr, o.MeanL1, o.MaxL1, o.Found, s.k)
			t.Logf("k=%d %s: %+v", s.k, o.Name, *o)
		}
		exp, ref, err := c.Measure(ctx, "explicit k³/6", func() (*Prepared, int64, error) { return c.Explicit(ctx) }, s.opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		row(exp, size(exp.ReprBytes))
		var acc *implicit.RowAcc
		rows, _, err := c.Measure(ctx, "on-disk rows (float32)", func() (*Prepared, int64, error) {
			p, n, a, err := c.Rows(ctx, "", implicit.RowStoreOptions{})
			acc = a
			return p, n, err
		}, s.opt, ref.T)
		if err != nil {
			t.Fatal(err)
		}
		row(rows, size(rows.ReprBytes)+" disk")
		acc.Close()
		for _, cfg := range s.sketches {
			cfg.Seed = 5
			name := fmt.Sprintf("sketch b=%d ×%d", cfg.Len, cfg.Count)
			o, _, err := c.Measure(ctx, name, func() (*Prepared, int64, error) { return c.Sketched(ctx, cfg) }, s.opt, ref.T)
			if err != nil {
				t.Fatal(err)
			}
			row(o, size(o.ReprBytes))
		}
	}
	fmt.Println(sb.String())
}

// TestRowStoreScaling measures the on-disk rows at k=100 against the number
// of documents: pass time, compressed size and time per contraction of a
// block of L=100 vectors; and float32 against float64 chunks.
func TestRowStoreScaling(t *testing.T) {
	gate(t)
	ctx := context.Background()
	const k, d, l = 100, 3000, 100
	var sb strings.Builder
	sb.WriteString("| docs | chunks | pass s | disk MiB | bytes/row | Apply s (L=100) | Apply ms per 1k rows | rel. diff float32 vs float64 |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range []int64{25000, 50000, 100000, 200000} {
		c, err := NewCorpus(n, d, k, 100, 7, 2)
		if err != nil {
			t.Fatal(err)
		}
		type res struct {
			p     *Prepared
			bytes int64
			acc   *implicit.RowAcc
			pass  time.Duration
		}
		run := func(f64 bool) res {
			t0 := time.Now()
			p, b, a, err := c.Rows(ctx, "", implicit.RowStoreOptions{Float64: f64})
			if err != nil {
				t.Fatal(err)
			}
			return res{p, b, a, time.Since(t0)}
		}
		r32 := run(false)
		theta := mat.NewDense(k, l, nil)
		for i := range k {
			for j := range l {
				theta.Set(i, j, float64((i*31+j*17)%13)-6)
			}
		}
		dst := mat.NewDense(k, l, nil)
		const calls = 3
		t0 := time.Now()
		for range calls {
			if err := r32.p.T.Apply(ctx, dst, theta); err != nil {
				t.Fatal(err)
			}
		}
		per := time.Since(t0) / calls
		diff := "—"
		if n == 25000 {
			r64 := run(true)
			e, err := RelErr(ctx, r32.p.T, r64.p.T, 20, 3)
			if err != nil {
				t.Fatal(err)
			}
			diff = fmt.Sprintf("%.2g (float64: %.1f bytes/row)", e, float64(r64.bytes)/float64(n))
			r64.acc.Close()
		}
		fmt.Fprintf(&sb, "| %d | %d | %.2f | %.1f | %.1f | %.3f | %.1f | %s |\n", n, r32.acc.Store.Chunks(), r32.pass.Seconds(),
			float64(r32.bytes)/mib, float64(r32.bytes)/float64(n), per.Seconds(), float64(per.Milliseconds())/(float64(n)/1000), diff)
		r32.acc.Close()
	}
	fmt.Println(sb.String())
}
