// Command emfit fits a Gaussian mixture as a `fit gmm` with EM passes
// would: the moment fit (gmm.Fit), then streamed EM passes from it
// (gmm.Start, gmm.Refine). Where the moments give fewer than k components
// — k above the dimension, or fewer positive directions than k — it
// takes the moment fit of the largest k that works and starts the rest at
// sample rows (gmm.Start), with a warning on stderr. It reads any dense
// input stream.OpenDense reads (.npy, .npz, CSV, Parquet, Arrow) and
// writes the model as fit gmm does (with --diag, as fit gmm --covariance
// diag: a variance per component and feature).
//
// Usage: go run ./bench/dense/emfit --input train.npy --k 10 [--diag]
// [--em-passes 100] [--differing] [--moments=false] [--seed 1] [--starts 4]
// [--workers 0]
// --out model.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
)

func main() {
	input := flag.String("input", "", "dense samples")
	k := flag.Int("k", 10, "components")
	diag := flag.Bool("diag", false, "a variance per component and feature (default: per component)")
	differing := flag.Bool("differing", true, "moment fit with a variance per component")
	moments := flag.Bool("moments", true, "start from the moment fit (false: every component from the sample)")
	passes := flag.Int("em-passes", 100, "most EM passes (0: the moment fit alone, repaired into a density)")
	tol := flag.Float64("tol", 1e-3, "stop when a pass gains less average log-likelihood per row")
	seed := flag.Uint64("seed", 1, "random seed")
	starts := flag.Int("starts", 0, "(0: the library's default, 4) spreads of the components the moments do not give, refined on the sample; the best is kept")
	workers := flag.Int("workers", 0, "goroutines per pass (default: one per CPU)")
	out := flag.String("out", "model.json", "model file")
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "emfit:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*input, *k, *diag, *differing, *moments, *passes, *tol, *seed, *starts, *workers, *out); err != nil {
		fmt.Fprintln(os.Stderr, "emfit:", err)
		os.Exit(1)
	}
}

func run(input string, k int, diag, differing, moments bool, passes int, tol float64, seed uint64, starts, workers int, out string) error {
	ctx := context.Background()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	src, err := stream.OpenDense(input, stream.Options{Workers: workers})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	t0 := time.Now()
	var mom *gmm.Model
	for kk := min(k, src.Info().Cols); moments && kk >= 1 && mom == nil; kk-- {
		m, err := gmm.Fit(ctx, src, gmm.Config{K: kk, Differing: differing, Seed: seed, Workers: workers})
		if err != nil {
			fmt.Fprintf(os.Stderr, "emfit: warning: moment fit with k=%d: %v\n", kk, err)
			continue
		}
		mom = m
	}
	t1 := time.Now()
	cfg := gmm.EMConfig{Passes: passes, Tol: tol, Diag: diag, Seed: seed, Starts: starts, Workers: workers}
	st, err := gmm.Start(ctx, src, mom, k, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "emfit: start: %s\n", st.EM.Started)
	m := st
	if passes > 0 {
		if m, err = gmm.Refine(ctx, src, st, cfg); err != nil {
			return err
		}
	}
	t2 := time.Now()
	if err := m.Write(out); err != nil {
		return err
	}
	n := 0
	if m.EM != nil {
		n = m.EM.Passes
	}
	fmt.Fprintf(os.Stderr, "emfit: moments %.2fs, EM %d passes %.2fs → %s\n", t1.Sub(t0).Seconds(), n, t2.Sub(t1).Seconds(), out)
	return nil
}
