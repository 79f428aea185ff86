package lda

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// curveDocs are the corpus sizes of the error curve ($STREAMFIT_CURVE_DOCS,
// comma-separated, overrides them).
func curveDocs() []int64 {
	ns := []int64{10000, 20000, 50000, 100000, 200000, 500000, 1000000}
	if s := os.Getenv("STREAMFIT_CURVE_DOCS"); s != "" {
		ns = ns[:0]
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil && n > 0 {
				ns = append(ns, n)
			}
		}
	}
	return ns
}

// BenchmarkErrorCurve fits corpus M's model (vocabulary 10,000, k=50, α₀=1,
// mean length 200; the topics do not depend on n) from Parquet files of n
// documents and reports the mean matched ℓ1 error against n, with the slope
// of log(mean ℓ1) against log(n), which sampling error alone makes about
// −1/2.
//
//	go test ./bench/lda -run '^$' -bench ErrorCurve -benchtime 1x -timeout 3h
func BenchmarkErrorCurve(b *testing.B) {
	ns := curveDocs()
	for b.Loop() {
		var lx, ly []float64
		b.Logf("%9s %9s %9s %6s %9s %8s %9s", "docs", "mean ℓ1", "max ℓ1", "found", "α error", "fit s", "RSS MB")
		for _, n := range ns {
			s := CorpusM.With(n)
			data, truth := corpus(b, s)
			r := runChild(b, fitJob(data, truth, s))
			if r.Err != "" {
				b.Logf("%9d fit failed: %s", n, r.Err)
				continue
			}
			b.Logf("%9d %9.4f %9.4f %6d %9.4f %8.1f %9.0f", n, r.MeanL1, r.MaxL1, r.Found, r.AlphaErr, r.Seconds, float64(r.PeakRSS)/1e6)
			lx, ly = append(lx, math.Log(float64(n))), append(ly, math.Log(r.MeanL1))
		}
		slope := fitSlope(lx, ly)
		b.Logf("slope of log(mean ℓ1) against log(n): %.3f", slope)
		b.ReportMetric(slope, "loglog-slope")
	}
}

// fitSlope is the least-squares slope of y against x.
func fitSlope(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
