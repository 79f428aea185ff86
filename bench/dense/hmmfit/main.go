// Command hmmfit fits a hidden Markov model as a `fit hmm` with
// Baum–Welch passes would: the moment fit (hmm.Fit), then Baum–Welch
// passes from it (hmm.Start, hmm.Refine), over dense rows with a sequence
// id per row (any input stream.OpenDense reads: an .npz with the rows and
// the ids as two members, Parquet, CSV). It writes the model as JSON: fit
// hmm's fields (O, T, pi) and the record of the passes.
//
// Usage: go run ./bench/dense/hmmfit --input train.npz --values-column x
// --group-column seq --k 5 [--discrete] [--windows] [--bw-passes 50] --out model.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
)

func main() {
	input := flag.String("input", "", "dense rows with a sequence id")
	values := flag.String("values-column", "", "values column (an .npz member)")
	group := flag.String("group-column", "", "sequence id column (an .npz member)")
	k := flag.Int("k", 5, "hidden states")
	discrete := flag.Bool("discrete", true, "one-hot rows")
	windows := flag.Bool("windows", true, "every window of three steps in the moment fit")
	passes := flag.Int("bw-passes", 50, "most Baum–Welch passes (0: the moment fit alone, floored)")
	tol := flag.Float64("tol", 1e-4, "stop when a pass gains less log-likelihood per row")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "model.json", "model file")
	flag.Parse()
	if err := run(*input, *values, *group, *k, *discrete, *windows, *passes, *tol, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "hmmfit:", err)
		os.Exit(1)
	}
}

func run(input, values, group string, k int, discrete, windows bool, passes int, tol float64, seed uint64, out string) error {
	ctx := context.Background()
	src, err := stream.OpenDense(input, stream.Options{ValuesColumn: values, GroupColumn: group})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	t0 := time.Now()
	mom, err := hmm.Fit(ctx, src, hmm.Config{K: k, Discrete: discrete, Windows: windows, Seed: seed})
	if err != nil {
		return err
	}
	for _, w := range mom.Fit.Warnings {
		fmt.Fprintln(os.Stderr, "hmmfit: warning:", w)
	}
	t1 := time.Now()
	cfg := hmm.BWConfig{Passes: passes, Tol: tol}
	r := &hmm.Refined{Model: hmm.Start(mom, cfg), BW: &hmm.BWRun{}}
	if passes > 0 {
		if r, err = hmm.Refine(ctx, src, r.Model, cfg); err != nil {
			return err
		}
	}
	t2 := time.Now()
	if err := models.WriteJSON(out, r); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "hmmfit: moments %.2fs, Baum–Welch %d passes %.2fs → %s\n", t1.Sub(t0).Seconds(), r.BW.Passes, t2.Sub(t1).Seconds(), out)
	return nil
}
