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
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/stream"
)

// TestPassMemoryFlat reads corpora of n and 4n documents in every format, each
// pass in a fresh process, and checks the peak anonymous RSS of the 4n pass is within 10%
// of the n pass (or 6 MB, the noise floor of small passes): a pass holds a bounded number of batches, never the corpus.
func TestPassMemoryFlat(t *testing.T) {
	if path := os.Getenv("STREAMFIT_RSS_CHILD"); path != "" {
		childPass(t, path)
		return
	}
	if os.Getenv("STREAMFIT_RSS_TEST") == "" {
		t.Skip("generates two corpora and runs 36 child passes; set STREAMFIT_RSS_TEST=1 (and STREAMFIT_RSS_DOCS=n)")
	}
	n := int64(20000)
	if s := os.Getenv("STREAMFIT_RSS_DOCS"); s != "" {
		n, _ = strconv.ParseInt(s, 10, 64)
	}
	base := t.TempDir()
	t.Setenv("STREAMFIT_BENCH_DIR", base)
	// Small corpora get small row groups, so even the smaller one spans many
	// more groups than a pass keeps in flight.
	groups := 0
	if n < 100000 {
		groups = 1024
	}
	small, err := corpusDirGroups(n, groups)
	if err != nil {
		t.Fatal(err)
	}
	large, err := corpusDirGroups(4*n, groups)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		a := medianPeak(t, filepath.Join(small, f.file))
		b := medianPeak(t, filepath.Join(large, f.file))
		t.Logf("%-13s peak RSS %6.1f MB at %d docs, %6.1f MB at %d docs", f.name, a/1e6, n, b/1e6, 4*n)
		// Within 10%, or 6 MB where 10% is below the noise of a single GC cycle.
		if b > max(1.10*a, a+6e6) {
			t.Errorf("%s: peak RSS grew from %.1f MB to %.1f MB with 4× the documents", f.name, a/1e6, b/1e6)
		}
	}
}

// medianPeak is the median of three childPeak runs: one pass's peak depends on
// when the collector happens to run, which moves it by several MB either way.
func medianPeak(t *testing.T, path string) float64 {
	p := []float64{childPeak(t, path), childPeak(t, path), childPeak(t, path)}
	slices.Sort(p)
	return p[1]
}

// childPeak runs one pass over path in a child process and returns its peak RSS.
func childPeak(t *testing.T, path string) float64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPassMemoryFlat$", "-test.v")
	// A tighter GC target makes the peak track live memory rather than the
	// collector's headroom.
	cmd.Env = append(os.Environ(), "STREAMFIT_RSS_CHILD="+path, "GOGC=25")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child pass over %s: %v\n%s", path, err, out)
	}
	var peak float64
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(line, "PEAK %g", &peak); err == nil {
			return peak
		}
	}
	t.Fatalf("child printed no peak:\n%s", out)
	return 0
}

func childPass(t *testing.T, path string) {
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Sample anonymous RSS: memory-mapped Arrow files put the file's pages in
	// VmHWM, which grows with the file though none of it is held by the pass.
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if a, err := rss.Anon(); err == nil && a > peak.Load() {
				peak.Store(a)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	_, _, err = pass(context.Background(), src)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() == 0 {
		t.Skip(rss.ErrUnsupported)
	}
	fmt.Printf("\nPEAK %d\n", peak.Load())
}
