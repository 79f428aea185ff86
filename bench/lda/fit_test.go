package lda

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
)

// rowGroup is the Parquet row-group size of generated corpora:
// $STREAMFIT_BENCH_ROWGROUP, else the writer's default (what `streamfit
// gen` writes).
func rowGroup() int {
	n, _ := strconv.Atoi(os.Getenv("STREAMFIT_BENCH_ROWGROUP"))
	return n
}

// corpus generates (or finds) s with the row-group setting of the run.
func corpus(tb testing.TB, s Spec) (data, truth string) {
	tb.Helper()
	if s.Format == "parquet" {
		s.RowGroup = rowGroup()
	}
	data, truth, err := Ensure(context.Background(), s)
	if err != nil {
		tb.Fatal(err)
	}
	return data, truth
}

// fitJob is the default fit of corpus s, as `streamfit fit lda --k K
// --alpha0 A --seed 1 --out model.json` runs it (the model is written to a
// scratch file beside the corpus).
func fitJob(data, truth string, s Spec) Job {
	return Job{Kind: "fit", Data: data, Truth: truth, K: s.K, Alpha0: s.Alpha0, Seed: 1, Out: data + ".model.json"}
}

// median returns the median of xs (the upper one for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCorpusM is the performance case of issue 3: corpus M (200,000
// documents, vocabulary 10,000, k=50, α₀=1, mean length 200) from Parquet
// and from plain docword. Each iteration runs, in fresh processes, one
// decode-only pass of the file (the unit of time) and one whole fit, and
// reports the medians over iterations: wall seconds, fit ÷ decode (wall and
// CPU), peak RSS (VmHWM) of the fit, and the accuracy against the truth.
//
//	STREAMFIT_BENCH_DIR=/tmp/b go test ./bench/lda -run '^$' -bench CorpusM -benchtime 3x -timeout 1h
func BenchmarkCorpusM(b *testing.B) {
	for _, format := range []string{"parquet", "docword"} {
		b.Run(format, func(b *testing.B) {
			s := CorpusM.In(format)
			data, truth := corpus(b, s)
			var dec, fit, cpuRatio, rss, decRSS []float64
			var last *Result
			for b.Loop() {
				d := runChild(b, Job{Kind: "decode", Data: data})
				f := runChild(b, fitJob(data, truth, s))
				if f.Err != "" {
					b.Fatal(f.Err)
				}
				b.Logf("decode %.2fs (cpu %.2fs, %.0f MB); fit %.2fs (cpu %.2fs, %.0f MB; pass 1 %.2fs, whitening %.2fs, pass 2 %.2fs, solve %.2fs; write %.2fs): ratio %.2f, mean ℓ1 %.4f, max %.4f, found %d, α err %.4f",
					d.Seconds, d.CPUSeconds, float64(d.PeakRSS)/1e6, f.Seconds, f.CPUSeconds, float64(f.PeakRSS)/1e6,
					f.Stages["pass1"], f.Stages["whitening"], f.Stages["pass2"], f.Stages["solve"], f.WriteSeconds,
					f.Seconds/d.Seconds, f.MeanL1, f.MaxL1, f.Found, f.AlphaErr)
				dec, fit = append(dec, d.Seconds), append(fit, f.Seconds)
				cpuRatio = append(cpuRatio, f.CPUSeconds/d.CPUSeconds)
				rss, decRSS = append(rss, float64(f.PeakRSS)/1e6), append(decRSS, float64(d.PeakRSS)/1e6)
				last = f
			}
			b.ReportMetric(median(fit), "s/fit")
			b.ReportMetric(median(dec), "s/decode")
			b.ReportMetric(median(fit)/median(dec), "fit/decode")
			b.ReportMetric(median(cpuRatio), "cpu-fit/decode")
			b.ReportMetric(median(rss), "peak-RSS-MB")
			b.ReportMetric(median(decRSS), "decode-RSS-MB")
			b.ReportMetric(last.MeanL1, "mean-l1")
			b.ReportMetric(last.MaxL1, "max-l1")
			b.ReportMetric(float64(last.Found), "found")
			b.ReportMetric(last.AlphaErr, "alpha-err")
		})
	}
}

// BenchmarkVocab100k is the memory case of issue 3: vocabulary 100,000 and
// k=100 under 1 GB peak RSS, with a fit that completes (enough documents
// for 100 topics: $STREAMFIT_BENCH_DOCS, default 300,000 of mean length
// 200).
//
//	go test ./bench/lda -run '^$' -bench Vocab100k -benchtime 1x -timeout 1h
func BenchmarkVocab100k(b *testing.B) {
	s := vocab100k()
	n := s.Docs
	data, truth := corpus(b, s)
	for b.Loop() {
		f := runChild(b, fitJob(data, truth, s))
		if f.Err != "" {
			b.Fatal(f.Err)
		}
		b.Logf("%d docs: fit %.1fs (cpu %.1fs), peak RSS %.0f MB, mean ℓ1 %.4f, max %.4f, found %d/100, α err %.4f, Σα %.3f, warnings %q",
			n, f.Seconds, f.CPUSeconds, float64(f.PeakRSS)/1e6, f.MeanL1, f.MaxL1, f.Found, f.AlphaErr, f.SumAlpha, f.Warnings)
		if f.PeakRSS >= 1e9 {
			b.Errorf("peak RSS %.0f MB, want under 1 GB", float64(f.PeakRSS)/1e6)
		}
		b.ReportMetric(float64(f.PeakRSS)/1e6, "peak-RSS-MB")
		b.ReportMetric(f.Seconds, "s/fit")
		b.ReportMetric(f.MeanL1, "mean-l1")
		b.ReportMetric(float64(f.Found), "found")
	}
}

// vocab100k is the corpus of BenchmarkVocab100k.
func vocab100k() Spec {
	n := int64(300000)
	if v, err := strconv.ParseInt(os.Getenv("STREAMFIT_BENCH_DOCS"), 10, 64); err == nil && v > 0 {
		n = v
	}
	return Spec{Docs: n, Vocab: 100000, K: 100, Alpha0: 1, DocLen: 200, Seed: 7, Format: "parquet"}
}

// BenchmarkProfileFit fits corpus M in this process, for profiling:
//
//	go test ./bench/lda -run '^$' -bench ProfileFit -benchtime 1x -cpuprofile cpu.out
//
// STREAMFIT_BENCH_FORMAT=docword reads the docword file instead,
// STREAMFIT_BENCH_VOCAB=100000 the corpus of BenchmarkVocab100k, and
// STREAMFIT_BENCH_DECODE=1 profiles the decode-only pass, and
// STREAMFIT_BENCH_INPUT=FILE (with STREAMFIT_BENCH_K, default 10) fits that
// file instead of a generated corpus, without evaluation. For the steady
// allocations of a fit:
//
//	STREAMFIT_BENCH_INPUT=corpus.parquet go test ./bench/lda -run '^$' -bench ProfileFit -benchtime 1x -memprofile mem.out -memprofilerate 65536
//	go tool pprof -sample_index=alloc_space -top mem.out
func BenchmarkProfileFit(b *testing.B) {
	s := CorpusM
	if f := os.Getenv("STREAMFIT_BENCH_FORMAT"); f != "" {
		s.Format = f
	}
	if os.Getenv("STREAMFIT_BENCH_VOCAB") == "100000" {
		s = vocab100k()
	}
	var j Job
	if in := os.Getenv("STREAMFIT_BENCH_INPUT"); in != "" {
		j = Job{Kind: "fit", Data: in, K: envInt(b, "STREAMFIT_BENCH_K", 10), Alpha0: 1, Seed: 1}
	} else {
		data, truth := corpus(b, s)
		j = fitJob(data, truth, s)
	}
	if os.Getenv("STREAMFIT_BENCH_DECODE") != "" {
		j.Kind = "decode"
	}
	for b.Loop() {
		r, err := j.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.Log(fmt.Sprintf("%+v", *r))
	}
}
