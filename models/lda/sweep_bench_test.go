package lda

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream/synth"
)

// BenchmarkFitK compares, in one run, the CPU of FitK over k = 10, 20,
// 50, 100 with four separate default fits (Fit on the same nine tenths of
// the documents, scored on the same tenth) and with the single default
// fit at k=100, on a generated corpus of 20 topics (20,000 documents of
// about 100 tokens over 5,000 words). It reports CPU seconds (user +
// system: the machine may be shared, so compare the ratios of one run),
// the ratios, and the largest relative difference of a k's held-out
// perplexity between the sweep and its separate fit:
//
//	go test ./models/lda -run '^$' -bench FitK -benchtime 1x
func BenchmarkFitK(b *testing.B) {
	src, err := synth.NewLDA(synth.LDAConfig{Docs: 20000, Vocab: 5000, K: 20, Alpha0: 1, DocLen: 100, Seed: 21})
	if err != nil {
		b.Fatal(err)
	}
	ks := []int{10, 20, 50, 100}
	cfg := DefaultConfig(0)
	train, held := heldOutSplit{src, false}, heldOutSplit{src, true}
	ctx := context.Background()
	for b.Loop() {
		c0 := sysinfo.CPUTime().Seconds()
		sw, err := FitK(ctx, src, ks, cfg, SweepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sweep := sysinfo.CPUTime().Seconds() - c0
		var separate, single, worst float64
		for i, k := range ks {
			c := cfg
			c.K = k
			c0 := sysinfo.CPUTime().Seconds()
			m, err := Fit(ctx, train, c)
			if err != nil {
				b.Fatal(err)
			}
			cpu := sysinfo.CPUTime().Seconds() - c0
			separate += cpu
			if k == 100 {
				single = cpu
			}
			h, err := Perplexity(ctx, held, m.Topics, m.Alpha, ScoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			rel := sw.Scores[i].Perplexity/h.Perplexity - 1
			worst = max(worst, math.Abs(rel))
			b.Logf("k=%d: held-out perplexity %.2f from the sweep (%d EM passes), %.2f separate (%d EM passes, %.2f CPU-s)",
				k, sw.Scores[i].Perplexity, sw.Scores[i].EMPasses, h.Perplexity, m.Fit.EM.Passes, cpu)
		}
		b.Logf("sweep %.2f CPU-s (scores included, %d passes), four separate fits %.2f, single k=100 %.2f: ratios %.2f and %.2f; recommended k=%d",
			sweep, sw.Passes, separate, single, sweep/separate, sweep/single, sw.Recommended)
		b.ReportMetric(sweep, "sweep-cpu-s")
		b.ReportMetric(separate, "separate-cpu-s")
		b.ReportMetric(sweep/single, "sweep/k100")
		b.ReportMetric(separate/single, "separate/k100")
		b.ReportMetric(worst*100, "max-perp-diff-%")
	}
}
