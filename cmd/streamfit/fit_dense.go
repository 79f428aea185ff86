package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
)

// fitDense fits one of the models on dense samples; it prints the fit's
// warnings (a solver that did not converge) on stderr and returns the
// function that writes the model and a one-line summary for stderr.
func fitDense(ctx context.Context, model string, f *fitFlags, o *stream.Options) (write func() error, summary string, err error) {
	var warnings []string
	// Values the libraries would read as "use the default" are mistakes here.
	if f.sigma2 < 0 {
		return nil, "", usagef("--sigma2=%g: a variance cannot be negative (0 estimates it)", f.sigma2)
	}
	if (model == "markov" || model == "hmm-snapshot") && !(f.alpha0 > 0) {
		return nil, "", usagef("--alpha0=%g: the Dirichlet concentration of the set proportions must be positive (001 §4 uses 1)", f.alpha0)
	}
	if f.r < 0 || f.r > 1 {
		return nil, "", usagef("--r=%g: the snapshot rate must be in (0, 1] (0 scans for it)", f.r)
	}
	switch model {
	case "gmm":
		src, err := stream.OpenDense(f.input, *o)
		if err != nil {
			return nil, "", err
		}
		defer stream.Close(src)
		m, err := gmm.Fit(ctx, src, gmm.Config{K: f.k, Differing: f.differing, Sigma2: f.sigma2, ExactDim: f.exactDim,
			Oversample: f.oversample, PowerIters: f.powerIters, Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers})
		if err != nil {
			return nil, "", err
		}
		write, warnings = func() error { return m.Write(f.out) }, m.Stats.Warnings
		summary = fmt.Sprintf("%d components in d=%d from %d rows, %d passes (%s)", m.K, m.D, m.Stats.Rows, m.Stats.Passes, m.Stats.Method)
	case "markov", "hmm-snapshot":
		if o.GroupColumn == "" {
			return nil, "", usagef("--group-column is required: it names the set id of each row")
		}
		src, err := stream.OpenDense(f.input, *o)
		if err != nil {
			return nil, "", err
		}
		defer stream.Close(src)
		cfg := markov.Config{K: f.k, Alpha0: f.alpha0, R: f.r, Sigma2: f.sigma2, Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}
		fit := markov.FitChain
		if model == "hmm-snapshot" {
			fit = markov.FitHMM
		}
		m, err := fit(ctx, src, cfg)
		if err != nil {
			return nil, "", err
		}
		write, warnings = func() error { return m.Write(f.out) }, m.Stats.Warnings
		how := "given"
		if m.Stats.RScanned {
			how = "scanned"
		}
		summary = fmt.Sprintf("%d states, r=%.3g (%s), from %d sets (%d rows), %d passes", m.K, m.R, how, m.Stats.Sets, m.Stats.Rows, m.Stats.Passes)
	case "ica", "hmm", "multiview":
		if model == "hmm" && o.GroupColumn == "" {
			return nil, "", usagef("--group-column is required: it names the sequence id of each row")
		}
		src, err := stream.OpenDense(f.input, *o)
		if err != nil {
			return nil, "", err
		}
		defer stream.Close(src)
		var m interface{ Write(string) error }
		switch model {
		case "ica":
			var im *ica.Model
			if im, err = ica.Fit(ctx, src, ica.Config{K: f.k, ExactDim: f.exactDim, Oversample: f.oversample, PowerIters: f.powerIters,
				Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}); err == nil {
				m, warnings = im, im.Stats.Warnings
			}
		case "hmm":
			var hm *hmm.Model
			if hm, err = hmm.Fit(ctx, src, hmm.Config{K: f.k, Windows: f.windows, Discrete: f.discrete, Solver: f.solverName,
				Restarts: f.restarts, Iters: f.iters, Seed: f.seed}); err == nil {
				m, warnings = hm, hm.Stats.Warnings
			}
		case "multiview":
			var vs [][]int
			var rotate bool
			if vs, rotate, err = parseViews(f.views); err != nil {
				return nil, "", err
			}
			var mm *multiview.Model
			if mm, err = multiview.Fit(ctx, src, multiview.Config{K: f.k, Views: vs, RandomViews: f.randomViews, Rotate: rotate, Solver: f.solverName,
				Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}); err == nil {
				m, warnings = mm, mm.Stats.Warnings
			}
		}
		if err != nil {
			return nil, "", err
		}
		write = func() error { return m.Write(f.out) }
		summary = fmt.Sprintf("k=%d", f.k)
	default:
		return nil, "", usagef("unknown model %q", model)
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "streamfit fit: warning: %s\n", w)
	}
	return write, summary, nil
}

// parseViews reads the --views flag: "0,1,2;3,4;5,6" gives the three column
// groups, "" the default split (equal, or random with --random-views), and
// "rotate" the default split after a random rotation of the rows (004 Prop
// 3.3, spherical Gaussian mixtures).
func parseViews(s string) (views [][]int, rotate bool, err error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, false, nil
	case "rotate":
		return nil, true, nil
	}
	for _, g := range strings.Split(s, ";") {
		var cols []int
		for _, c := range strings.Split(g, ",") {
			j, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || j < 0 {
				return nil, false, usagef("--views: %q is not a column index (want groups like \"0,1,2;3,4;5,6\", or \"rotate\")", c)
			}
			cols = append(cols, j)
		}
		views = append(views, cols)
	}
	if len(views) != 3 {
		return nil, false, usagef("--views: want three groups separated by ';', got %d", len(views))
	}
	return views, false, nil
}
