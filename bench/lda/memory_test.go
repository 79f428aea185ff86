package lda

import (
	"cmp"
	"os"
	"testing"
)

// TestFitMemoryFlat checks that a fit's memory does not grow with the number
// of documents: fits of corpora of n and 4n documents (corpus M's model,
// Parquet as `streamfit gen` writes it), each in a fresh process with default
// settings, must peak (VmHWM) within 10% of each other. Each size is fitted
// five times and the median taken, as one run's peak depends on when the
// collector happens to run (±10% between runs of the same file). It replaces
// a live-heap test in models/lda whose ~30 MB peak moved by more than 10%
// between runs of the same size.
//
//	STREAMFIT_LDA_RSS=1 go test ./bench/lda -run FitMemoryFlat -v -timeout 1h
//
// STREAMFIT_LDA_RSS_DOCS sets n (default 50,000) and STREAMFIT_LDA_RSS_FORMAT
// the file format (parquet, the default, or docword).
func TestFitMemoryFlat(t *testing.T) {
	gate(t, "STREAMFIT_LDA_RSS", "generates two corpora and runs ten fits in child processes")
	n := int64(envInt(t, "STREAMFIT_LDA_RSS_DOCS", 50000))
	format := cmp.Or(os.Getenv("STREAMFIT_LDA_RSS_FORMAT"), "parquet")
	peak := func(docs int64) (float64, *Result) {
		s := CorpusM.With(docs).In(format)
		data, truth := corpus(t, s)
		var p []float64
		var last *Result
		for range 5 {
			r := runChild(t, fitJob(data, truth, s))
			if r.Err != "" {
				t.Fatal(r.Err)
			}
			p = append(p, float64(r.PeakRSS))
			last = r
		}
		mb := make([]float64, len(p))
		for i, v := range p {
			mb[i] = v / 1e6
		}
		t.Logf("%7d documents: peak RSS %.0f MB, the median of %.0f (fit %.1fs, mean ℓ1 %.4f)", docs, median(p)/1e6, mb, last.Seconds, last.MeanL1)
		return median(p), last
	}
	small, _ := peak(n)
	large, _ := peak(4 * n)
	ratio := large / small
	t.Logf("%s: median peak RSS %.1f MB at %d documents, %.1f MB at %d (ratio %.3f)", format, small/1e6, n, large/1e6, 4*n, ratio)
	if ratio > 1.10 {
		t.Errorf("peak RSS grew by a factor %.3f for 4× the documents (limit 1.10)", ratio)
	}
}
