// Command emsteps measures EM settings from one spectral start on a real
// corpus of bench/real/corpora.sh: it fits the spectral start once (the
// solver the default fit uses when EM passes follow), then for each
// setting given runs the EM passes from a copy of it (lda.RefineEM) and
// prints their CPU seconds (the passes alone), the passes and the held-out
// perplexity of the result (lda.Perplexity, as eval --heldout).
//
// Usage: go run ./bench/real/emsteps CORPUSDIR K SETTING...
//
// CORPUSDIR holds train.docword.gz and test.docword.gz. A SETTING is
//
//	batch                       the default batch passes (stopping rule, cap 10)
//	batch:N                     exactly N batch passes
//	online:MB:KAPPA:TAU0:N      exactly N online passes (EM.Online)
//	hybrid[:N]                  one online pass (defaults), then batch passes (cap N)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// cpu is the process's user + system CPU seconds so far.
func cpu() float64 { return sysinfo.CPUTime().Seconds() }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "emsteps:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: emsteps CORPUSDIR K SETTING...")
	}
	k, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	ctx := context.Background()
	src, err := stream.Open(args[0]+"/train.docword.gz", stream.Options{})
	if err != nil {
		return err
	}
	test, err := stream.Open(args[0]+"/test.docword.gz", stream.Options{})
	if err != nil {
		return err
	}
	cfg := lda.Config{K: k, Alpha0: 1, Seed: 1, Solver: "simultaneous"}
	c0 := cpu()
	start, err := lda.Fit(ctx, src, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("spectral start: %.2f CPU-s\n", cpu()-c0)
	saved, err := json.Marshal(start)
	if err != nil {
		return err
	}
	for _, setting := range args[2:] {
		var m models.Model
		if err := json.Unmarshal(saved, &m); err != nil {
			return err
		}
		c1 := cpu()
		if err := refine(ctx, src, &m, cfg, setting); err != nil {
			return fmt.Errorf("%s: %w", setting, err)
		}
		dc := cpu() - c1
		h, err := lda.Perplexity(ctx, test, m.Topics, m.Alpha, lda.ScoreOptions{})
		if err != nil {
			return err
		}
		fmt.Printf("%-28s passes %d  EM CPU-s %.2f  held-out perplexity %.1f\n", setting, m.Fit.EM.Passes, dc, h.Perplexity)
	}
	return nil
}

// refine runs the EM passes of setting on m.
func refine(ctx context.Context, src stream.DocSource, m *models.Model, cfg lda.Config, setting string) error {
	f := strings.Split(setting, ":")
	num := func(i int) float64 {
		if i >= len(f) {
			return 0
		}
		v, _ := strconv.ParseFloat(f[i], 64)
		return v
	}
	em := lda.EM{Passes: 10, FitAlpha: true}
	switch f[0] {
	case "batch":
		if len(f) > 1 {
			em.Passes, em.Tol = int(num(1)), 1e-12
		}
	case "online":
		em = lda.EM{Passes: int(num(4)), Tol: 1e-12, FitAlpha: true, Online: true, MiniBatch: int(num(1)), Kappa: num(2), Tau0: num(3)}
	case "hybrid":
		cfg.EM = lda.EM{Passes: 1, Tol: 1e-12, FitAlpha: true, Online: true}
		if err := lda.RefineEM(ctx, src, m, cfg); err != nil {
			return err
		}
		m.Fit.EM = nil // the batch passes start from the online pass's model
		if len(f) > 1 {
			em.Passes = int(num(1))
		}
	default:
		return fmt.Errorf("unknown setting %q", setting)
	}
	cfg.EM = em
	return lda.RefineEM(ctx, src, m, cfg)
}
