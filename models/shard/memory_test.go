package shard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// A dense model's statistics passes hold the totals and one batch per
// worker, whatever the rows: both GMM passes over a Parquet file of 4n
// rows peak within 10% of the same passes over n rows, in anonymous
// resident memory (rss.SampleAnon: heap, stacks, runtime; the pages of the
// input file that the reader maps are the kernel's to drop, and VmHWM
// counts them), median of three fresh processes each.
func TestDenseStatsMemoryFlat(t *testing.T) {
	if path := os.Getenv("STREAMFIT_SHARD_RSS_CHILD"); path != "" {
		childPasses(t, path)
		return
	}
	if testing.Short() {
		t.Skip("writes two Parquet files and runs six processes")
	}
	if _, err := rss.Peak(); err != nil {
		t.Skip(err)
	}
	const n, d = 40000, 48
	dir := t.TempDir()
	peaks := make([]float64, 2)
	for i, rows := range []int64{n, 4 * n} {
		path := filepath.Join(dir, fmt.Sprintf("g%d.parquet", rows))
		writeGMM(t, path, rows, d)
		var ps []float64
		for range 3 {
			ps = append(ps, childPeak(t, path))
		}
		slices.Sort(ps)
		peaks[i] = ps[1]
	}
	t.Logf("peak anonymous RSS of both gmm passes: %.1f MB at n=%d rows, %.1f MB at 4n (d=%d)", peaks[0]/1e6, n, peaks[1]/1e6, d)
	if peaks[1] > 1.1*peaks[0] {
		t.Errorf("peak RSS grew from %.1f MB at n rows to %.1f MB at 4n (more than 10%%)", peaks[0]/1e6, peaks[1]/1e6)
	}
}

func writeGMM(t *testing.T, path string, rows int64, d int) {
	t.Helper()
	src, err := synth.NewGMM(synth.GMMConfig{Rows: rows, D: d, K: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	w, err := stream.CreateDense(path, stream.WriteOptions{RowGroupRows: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for b, err := range src.Rows(context.Background()) {
		if err == nil {
			err = w.Write(b)
		}
		if err != nil {
			w.Abort()
			t.Fatal(err)
		}
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// childPeak runs the passes over path in a fresh process.
func childPeak(t *testing.T, path string) float64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDenseStatsMemoryFlat$", "-test.v")
	// GOGC=10 (as bench/models/memtest): the collector follows the live
	// memory closely, so the peak measures what the passes hold and not
	// how much garbage the default collector lets pile up (which grows
	// with the length of any pass, a plain read of the rows included).
	cmd.Env = append(os.Environ(), "STREAMFIT_SHARD_RSS_CHILD="+path, "GOGC=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child passes over %s: %v\n%s", path, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		var p float64
		if _, err := fmt.Sscanf(line, "PEAK %g", &p); err == nil {
			return p
		}
	}
	t.Fatalf("child printed no peak:\n%s", out)
	return 0
}

func childPasses(t *testing.T, path string) {
	stop := rss.SampleAnon(2 * time.Millisecond)
	st, err := GMM(gmm.Config{K: 4}).Passes(context.Background(), []Part{{Path: path}}, stream.Options{Workers: 1, InflightBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if st.Header.Phase != 2 {
		t.Fatalf("the passes ended at pass %d", st.Header.Phase)
	}
	fmt.Printf("\nPEAK %d\n", stop())
}
