// Command snapshots reproduces 001 §4 (MATH §5.1): an HMM with m=40, k=5,
// σ²=2, α₀=1, r=0.3 learned from N sets of n=1000 unordered snapshots, with
// N = 1000·2^j. It prints the relative spectral-norm errors of U, UT and P
// (fit with the true r, as in the paper) and the r picked by the
// projection-distance scan, as a Markdown table.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"runtime"
	"time"

	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream/synth"
)

func main() {
	maxJ := flag.Int("max-j", 3, "largest j: N = 1000·2^j sets")
	perSet := flag.Int("n", 1000, "points per set")
	seed := flag.Uint64("seed", 1, "seed of the model and the data")
	restarts := flag.Int("restarts", 0, "power-method restarts (0: solver default)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines per pass")
	curve := flag.Bool("curve", false, "also print the scan curve of the largest N")
	flag.Parse()
	ctx := context.Background()
	fmt.Println("| N sets | rows | U rel err | UT rel err | P rel err | π ℓ1 | scanned r | seconds |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|")
	var last []markov.ScanPoint
	for j := 0; j <= *maxJ; j++ {
		n := int64(1000) << j
		src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: n, PerSet: *perSet, K: 5, M: 40, Sigma2: 2, Alpha0: 1, R: 0.3, Seed: *seed, Workers: *workers})
		if err != nil {
			log.Fatal(err)
		}
		start := time.Now()
		m, err := markov.FitHMM(ctx, src, markov.Config{K: 5, Alpha0: 1, R: 0.3, Seed: *seed, Restarts: *restarts, Workers: *workers})
		if err != nil {
			log.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		t := src.Truth
		truth := &markov.Model{Model: t.Model, K: t.K, D: t.D, Alpha0: t.Alpha0, R: t.R, Pi: t.Pi, P: t.P, T: t.T, U: t.U, UT: t.UT, Sigma2: t.Sigma2}
		ev, err := markov.Eval(m, truth)
		if err != nil {
			log.Fatal(err)
		}
		scan, r, err := markov.Scan(m, 0.01)
		if err != nil {
			log.Fatal(err)
		}
		last = scan
		fmt.Printf("| %d | %d | %.4f | %.4f | %.4f | %.4f | %.2f | %.1f |\n", n, n*int64(*perSet), ev.U, ev.UT, ev.P, ev.Pi, r, secs)
	}
	if *curve {
		fmt.Println("\n| r | projection distance |")
		fmt.Println("|---:|---:|")
		for i, p := range last {
			if i%5 == 0 {
				fmt.Printf("| %.2f | %.3g |\n", p.R, p.Dist)
			}
		}
	}
}
