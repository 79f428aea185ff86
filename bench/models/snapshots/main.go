// Command snapshots reproduces 001 §4 (docs/MATH.md §5.1): an HMM with m=40, k=5,
// σ²=2, α₀=1, r=0.3 learned from N sets of n=1000 unordered snapshots, with
// N = 1000·2^j for j = min-j … max-j. Per N it fits once with the true r (as
// the paper does) and prints the relative spectral-norm errors of U, UT and
// P, the ℓ1 error of π, the r the projection-distance scan picks on the same
// fit (no further pass) and the seconds the fit took, as a Markdown table row
// as soon as it is done; with -curve, it also rewrites a file with the scan
// curves of every N so far, side by side.
//
//	go run ./bench/models/snapshots -min-j 0 -max-j 8 -curve curves.md
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"

	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream/synth"
)

func main() {
	minJ := flag.Int("min-j", 0, "smallest j: N = 1000·2^j sets")
	maxJ := flag.Int("max-j", 3, "largest j")
	perSet := flag.Int("n", 1000, "points per set")
	seed := flag.Uint64("seed", 1, "seed of the model and the data")
	restarts := flag.Int("restarts", 0, "power-method restarts (0: solver default)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines per pass")
	curve := flag.String("curve", "", "file to (re)write, after every N, with the scan curves (negative mass and projection distance) of the Ns so far")
	flag.Parse()
	ctx := context.Background()
	fmt.Println("| N sets | rows | U rel err | UT rel err | P rel err | π ℓ1 | scanned r | seconds |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|")
	var curves [][]markov.ScanPoint
	var ns []int64
	for j := *minJ; j <= *maxJ; j++ {
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
		ev, err := markov.Eval(m, markov.TruthOf(src))
		if err != nil {
			log.Fatal(err)
		}
		scan, r, err := markov.Scan(m, 0.01)
		if err != nil {
			log.Fatal(err)
		}
		curves, ns = append(curves, scan), append(ns, n)
		fmt.Printf("| %d | %d | %.4f | %.4f | %.4f | %.4f | %.2f | %.1f |\n", n, n*int64(*perSet), ev.U, ev.UT, ev.P, ev.Pi, r, secs)
		os.Stdout.Sync()
		if *curve != "" {
			if err := writeCurves(*curve, ns, curves); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// writeCurves writes the scan curves as Markdown tables: every 0.05 in r,
// and every 0.01 between 0.18 and 0.42 where the take-off is.
func writeCurves(path string, ns []int64, curves [][]markov.ScanPoint) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, what := range []string{"negative mass", "projection distance"} {
		fmt.Fprintf(f, "\n%s of P(r) by N (* = within the window of a pole)\n\n| r |", what)
		for _, n := range ns {
			fmt.Fprintf(f, " N=%d |", n)
		}
		fmt.Fprint(f, "\n|---:|")
		for range ns {
			fmt.Fprint(f, "---:|")
		}
		fmt.Fprintln(f)
		for i := range curves[0] {
			r := curves[0][i].R
			if i%5 != 0 && (r > 0.42 || r < 0.18) {
				continue
			}
			fmt.Fprintf(f, "| %.2f |", r)
			for _, c := range curves {
				v := c[i].Neg
				if what != "negative mass" {
					v = c[i].Dist
				}
				pole := ""
				if c[i].Pole {
					pole = "*"
				}
				fmt.Fprintf(f, " %.3g%s |", v, pole)
			}
			fmt.Fprintln(f)
		}
	}
	return f.Close()
}
