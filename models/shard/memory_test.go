package shard

import (
	"context"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// A dense model's statistics passes hold the totals and one batch per
// worker, whatever the rows: both GMM passes (implicit.RunPlan, as `stats`
// runs them) over 4n generated rows peak within 10% of the same passes
// over n rows, in anonymous resident memory (rss.SampleAnon: heap, stacks,
// runtime), median of three fresh processes each. The rows are one batch
// handed out again and again, so the peak is the passes' own and not a
// file reader's or a generator's.
func TestDenseStatsMemoryFlat(t *testing.T) {
	if rows := os.Getenv("STREAMFIT_SHARD_RSS_CHILD"); rows != "" {
		childPasses(t, rows)
		return
	}
	if os.Getenv("STREAMFIT_RSS_TESTS") == "" {
		t.Skip("a measurement in six processes, about 30 s; set STREAMFIT_RSS_TESTS=1 (TestDenseStatsHeapFlat guards the same in-process)")
	}
	if _, err := rss.Anon(); err != nil {
		t.Skip(err)
	}
	const n = 100000
	peaks := make([]float64, 2)
	for i, rows := range []int64{n, 4 * n} {
		var ps []float64
		for range 3 {
			ps = append(ps, childPeak(t, fmt.Sprint(rows)))
		}
		slices.Sort(ps)
		peaks[i] = ps[1]
	}
	t.Logf("peak anonymous RSS of both gmm passes (d=%d): %.1f MB at n=%d rows, %.1f MB at 4n", memD, peaks[0]/1e6, n, peaks[1]/1e6)
	if peaks[1] > 1.1*peaks[0] {
		t.Errorf("peak RSS grew from %.1f MB at n rows to %.1f MB at 4n (more than 10%%)", peaks[0]/1e6, peaks[1]/1e6)
	}
}

// The peak heap of the dense statistics passes at 4n rows is within 1 MB
// of the peak at n rows (bench/models/memtest), the in-process guard of
// TestDenseStatsMemoryFlat. The rows are one batch handed out again and
// again, so that only the passes allocate.
func TestDenseStatsHeapFlat(t *testing.T) {
	batch := oneBatch(t)
	memtest.Check(t, 25000, 1<<20, func(rows int64) error {
		src := &repeated{b: batch, times: int(rows) / batch.Rows}
		_, err := implicit.RunPlan(context.Background(), src, &gmm.Plan{Config: gmm.Config{K: 4}}, 2)
		return err
	})
}

// oneBatch returns 1000 rows of a generated mixture of memD columns.
func oneBatch(t *testing.T) *stream.Dense {
	t.Helper()
	g, err := synth.NewGMM(synth.GMMConfig{Rows: 1000, D: memD, K: 4, Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := stream.CollectDense(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// repeated is a DenseSource of one batch handed out times times.
type repeated struct {
	b     *stream.Dense
	times int
}

func (r *repeated) Info() stream.Info {
	return stream.Info{Cols: r.b.Cols, Rows: int64(r.b.Rows * r.times)}
}

func (r *repeated) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		for range r.times {
			if !yield(r.b, nil) {
				return
			}
		}
	}
}

// memD is the dimension of the rows of the memory test.
const memD = 48

// childPeak runs the passes over rows generated rows in a fresh process.
func childPeak(t *testing.T, rows string) float64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDenseStatsMemoryFlat$", "-test.v")
	// GOGC=10 (as bench/models/memtest): the collector follows the live
	// memory closely, so the peak measures what the passes hold and not
	// how much garbage the default collector lets pile up.
	cmd.Env = append(os.Environ(), "STREAMFIT_SHARD_RSS_CHILD="+rows, "GOGC=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child passes over %s rows: %v\n%s", rows, err, out)
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

func childPasses(t *testing.T, rows string) {
	var n int64
	fmt.Sscan(rows, &n)
	batch := oneBatch(t)
	src := &repeated{b: batch, times: int(n) / batch.Rows}
	stop := rss.SampleAnon(2 * time.Millisecond)
	st, err := implicit.RunPlan(context.Background(), src, &gmm.Plan{Config: gmm.Config{K: 4}}, 2)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if st.Header.Phase != 2 || st.Rows != n {
		t.Fatalf("the passes ended at pass %d after %d rows", st.Header.Phase, st.Rows)
	}
	fmt.Printf("\nPEAK %d\n", peak)
}
