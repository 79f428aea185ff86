package stream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/stream"
)

// Memory bound of a full pass with default settings (issue 2): the peak RSS
// at 4n documents is within 10% of the peak at n, and under 200 MB.
const (
	maxGrowth = 1.10
	maxPeak   = 200e6
)

// TestPassMemoryFlat reads corpora of n and 4n documents in every format,
// written as `streamfit gen lda` writes them, each pass in a fresh process
// with default options and the default GOGC, and checks the kernel's peak
// RSS (VmHWM: everything resident, the binary's pages and mapped input
// included) against maxGrowth and maxPeak. No allowance is added: each
// figure is the median of three processes, since one pass's peak moves by a
// few MB with when the collector runs.
//
//	STREAMFIT_RSS_TEST=1 go test ./bench/stream -run TestPassMemoryFlat -v -timeout 60m
//
// STREAMFIT_RSS_DOCS sets n (default 1000000, so n is the benchmark's corpus;
// both corpora are cached under STREAMFIT_BENCH_DIR). n must be large enough
// that the pass reaches its steady state: the in-flight budget fills (the
// test fails if n documents decode to less than four budgets). What a pass
// holds is then fixed early: its document batches (stream.ResultSlots + 1 of
// them for Parquet and Arrow, each used in turn from the first batches on,
// so how busy the pass happens to get does not matter), buffers recycled for
// the whole pass, and for a memory-mapped Arrow file the pages of the record
// batches being decoded. What still grows with n is the little garbage a
// pass makes after warm-up (arrow-go's page headers and record structures,
// about 1 MB per million documents), which the collector lets accumulate
// until the heap reaches its goal, about twice the live heap.
func TestPassMemoryFlat(t *testing.T) {
	if path := os.Getenv("STREAMFIT_RSS_CHILD"); path != "" {
		childPass(t, path)
		return
	}
	if os.Getenv("STREAMFIT_RSS_TEST") == "" {
		t.Skip("generates corpora of n and 4n documents and runs 36 child passes; set STREAMFIT_RSS_TEST=1 (and STREAMFIT_RSS_DOCS=n)")
	}
	n := int64(1000000)
	if s := os.Getenv("STREAMFIT_RSS_DOCS"); s != "" {
		var err error
		if n, err = strconv.ParseInt(s, 10, 64); err != nil || n <= 0 {
			t.Fatalf("STREAMFIT_RSS_DOCS=%q", s)
		}
	}
	small, err := corpusDir(n)
	if err != nil {
		t.Fatal(err)
	}
	large, err := corpusDir(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%-13s %12s %12s %7s %12s %12s", "format", "VmHWM n", "VmHWM 4n", "ratio", "anon n", "anon 4n")
	for _, f := range files {
		a := medianPeak(t, filepath.Join(small, f.file))
		b := medianPeak(t, filepath.Join(large, f.file))
		if a.nnz*8 < 4*stream.DefaultInflightBytes {
			t.Fatalf("n=%d documents hold %d entries: too few to fill the pass's in-flight budget; raise STREAMFIT_RSS_DOCS", n, a.nnz)
		}
		ratio := b.hwm / a.hwm
		t.Logf("%-13s %9.1f MB %9.1f MB %7.3f %9.1f MB %9.1f MB", f.name, a.hwm/1e6, b.hwm/1e6, ratio, a.anon/1e6, b.anon/1e6)
		if ratio > maxGrowth {
			t.Errorf("%s: peak RSS grew from %.1f MB at %d documents to %.1f MB at %d (ratio %.3f > %.2f)", f.name, a.hwm/1e6, n, b.hwm/1e6, 4*n, ratio, maxGrowth)
		}
		if max(a.hwm, b.hwm) >= maxPeak {
			t.Errorf("%s: peak RSS %.1f MB, not under %.0f MB", f.name, max(a.hwm, b.hwm)/1e6, maxPeak/1e6)
		}
	}
}

// peak is what one child pass measured.
type peak struct {
	hwm, anon float64 // VmHWM and the largest sampled anonymous RSS, bytes
	nnz       int64
}

// medianPeak runs three child passes over path and takes the median of each
// figure.
func medianPeak(t *testing.T, path string) peak {
	var ps []peak
	for range 3 {
		ps = append(ps, childPeak(t, path))
	}
	med := func(get func(peak) float64) float64 {
		v := []float64{get(ps[0]), get(ps[1]), get(ps[2])}
		slices.Sort(v)
		return v[1]
	}
	return peak{hwm: med(func(p peak) float64 { return p.hwm }), anon: med(func(p peak) float64 { return p.anon }), nnz: ps[0].nnz}
}

// childPeak runs one pass over path in a fresh process, with the parent's
// environment (so the default GOGC unless the caller set one).
func childPeak(t *testing.T, path string) peak {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPassMemoryFlat$", "-test.v")
	cmd.Env = append(os.Environ(), "STREAMFIT_RSS_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child pass over %s: %v\n%s", path, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		var p peak
		if _, err := fmt.Sscanf(line, "PEAK %g %g %d", &p.hwm, &p.anon, &p.nnz); err == nil {
			return p
		}
	}
	t.Fatalf("child printed no peak:\n%s", out)
	return peak{}
}

func childPass(t *testing.T, path string) {
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := rss.SampleAnon(2 * time.Millisecond)
	_, nnz, err := pass(context.Background(), src)
	anon := stop()
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := rss.Peak()
	if err != nil {
		t.Skip(err)
	}
	fmt.Printf("\nPEAK %d %d %d\n", hwm, anon, nnz)
}
