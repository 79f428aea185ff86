package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("fit", "fit a model by the method of moments: fit lda|topic|gmm|markov|hmm-snapshot", runFit)
}

// fitModels lists the models `fit` knows, with their one-line descriptions.
var fitModels = []struct{ name, about string }{
	{"lda", "latent Dirichlet allocation on bag-of-words documents (α₀ given)"},
	{"topic", "exchangeable single-topic model on bag-of-words documents"},
	{"gmm", "spherical Gaussian mixture on dense samples (common or differing variances)"},
	{"markov", "Markov chain from unordered snapshots: one-hot rows grouped into sets by --group-column"},
	{"hmm-snapshot", "HMM from unordered snapshots: observation rows grouped into sets by --group-column"},
	{"ica", "independent component analysis by the fourth cumulant on dense samples"},
	{"hmm", "hidden Markov model from sequences: one row per time step, sequence id in --group-column"},
	{"multiview", "multi-view mixture: three views given as column groups (--views) or an equal split"},
}

func runFit(ctx context.Context, args []string) error {
	names := make([]string, len(fitModels))
	for i, m := range fitModels {
		names[i] = m.name
	}
	if len(args) == 0 || oneOf(args[0], names...) != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "usage: streamfit fit MODEL --input FILE --k K --out model.json [flags]\nmodels:\n")
		for _, m := range fitModels {
			fmt.Fprintf(&b, "  %-13s %s\n", m.name, m.about)
		}
		return usageError{strings.TrimRight(b.String(), "\n")}
	}
	model := args[0]
	fs := newFlags("fit "+model, "", "Fits "+model+" from --input in a fixed number of passes and writes the model as JSON (atomically).")
	o := addInputFlags(fs)
	input := fs.String("input", "", "input file (any format of `streamfit inspect`), or a directory of text files")
	out := fs.String("out", "model.json", "output model file (JSON)")
	k := fs.Int("k", 10, "number of topics / components / states")
	seed := fs.Uint64("seed", 1, "random seed (same input and seed give the same model)")
	alpha0 := fs.Float64("alpha0", 1, "lda: Dirichlet concentration α₀ (must be > 0); markov/hmm-snapshot: α₀ of the set mixture")
	solverName := fs.String("solver", "rtpm", "tensor decomposition for lda/topic: "+strings.Join(solver.Names(), ", "))
	refine := fs.Int("refine", 0, "lda/topic: CP-ALS sweeps after the solver")
	restarts := fs.Int("restarts", 0, "solver restarts per component (0: solver default)")
	iters := fs.Int("iters", 0, "solver iterations per phase (0: solver default)")
	oversample := fs.Int("oversample", 10, "lda/topic/gmm: extra sketch columns beyond k for the randomized whitening")
	powerIters := fs.Int("power-iters", 0, "lda/topic/gmm: power passes of the randomized whitening (each one more pass)")
	exactDim := fs.Int("exact-dim", 0, "whiten exactly (dense d×d) up to this dimension (0: model default, -1: never)")
	implicitOp := fs.Bool("implicit", false, "lda/topic: decompose the implicit operator over whitened rows held in memory instead of the k×k×k tensor")
	differing := fs.Bool("differing", false, "gmm: a variance per component")
	sigma2 := fs.Float64("sigma2", 0, "gmm: known common variance; hmm-snapshot: observation noise variance (0: estimate/default)")
	windows := fs.Bool("windows", false, "hmm: use every window of three steps, not only the first three of each sequence")
	discrete := fs.Bool("discrete", false, "hmm: observations are one-hot symbols (project O's columns onto the simplex)")
	views := fs.String("views", "", `multiview: column groups of the three views, e.g. "0,1,2;3,4;5,6" (default: an equal split)`)
	randomViews := fs.Bool("random-views", false, "multiview: a seeded random split of the columns into three views (mixtures of product distributions)")
	r := fs.Float64("r", 0, "markov/hmm-snapshot: the snapshot rate r (0: find it by the projection-distance scan)")
	fromStats := fs.String("from-stats", "", "lda/topic: fit from merged phase-2 statistics (`streamfit stats`/`merge`) instead of reading --input")
	prog := addProgressFlag(fs)
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if *fromStats != "" {
		if model != "lda" && model != "topic" {
			return usagef("--from-stats works for lda and topic")
		}
		// k, α₀ and seed come from the statistics unless given explicitly.
		cfg := lda.Config{Single: model == "topic", Workers: o.Workers, Solver: *solverName, Refine: *refine,
			Restarts: *restarts, Iters: *iters, Implicit: *implicitOp}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "k":
				cfg.K = *k
			case "alpha0":
				cfg.Alpha0 = *alpha0
			case "seed":
				cfg.Seed = *seed
			}
		})
		m, err := fitFromStats(ctx, *fromStats, cfg)
		if err != nil {
			return err
		}
		return m.Write(*out)
	}
	if *input == "" && len(pos) == 1 {
		*input = pos[0]
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *input == "" {
		return usagef("--input is required")
	}
	if *k < 1 {
		return usagef("--k=%d: need at least one component", *k)
	}
	if model == "lda" && !(*alpha0 > 0) {
		return usagef("--alpha0=%g: the Dirichlet concentration must be positive (1 is the usual choice)", *alpha0)
	}
	if _, err := solver.ByName(*solverName); err != nil {
		return usageError{err.Error()}
	}
	start := time.Now()
	p, done := startProgress(*prog, "fit "+model, 0)
	defer done()
	o.Progress = p
	var write func() error
	var summary string
	switch model {
	case "lda", "topic":
		src, err := stream.Open(*input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		m, err := lda.Fit(ctx, src, lda.Config{
			K: *k, Alpha0: *alpha0, Single: model == "topic", Seed: *seed, Workers: o.Workers,
			Oversample: *oversample, PowerIters: *powerIters, ExactDim: *exactDim, Implicit: *implicitOp,
			Solver: *solverName, Refine: *refine, Restarts: *restarts, Iters: *iters,
		})
		if err != nil {
			return err
		}
		write = func() error { return m.Write(*out) }
		summary = fmt.Sprintf("%d topics over %d words from %d documents (%d skipped), %d passes", m.K, m.D, m.Fit.Docs, m.Fit.Skipped, m.Fit.Passes)
	case "gmm":
		src, err := stream.OpenDense(*input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		m, err := gmm.Fit(ctx, src, gmm.Config{K: *k, Differing: *differing, Sigma2: *sigma2, ExactDim: *exactDim,
			Oversample: *oversample, PowerIters: *powerIters, Restarts: *restarts, Iters: *iters, Seed: *seed, Workers: o.Workers})
		if err != nil {
			return err
		}
		write = func() error { return m.Write(*out) }
		summary = fmt.Sprintf("%d components in d=%d from %d rows, %d passes", m.K, m.D, m.Stats.Rows, m.Stats.Passes)
	case "markov", "hmm-snapshot":
		if o.GroupColumn == "" {
			return usagef("--group-column is required: it names the set id of each row")
		}
		src, err := stream.OpenDense(*input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		cfg := markov.Config{K: *k, Alpha0: *alpha0, R: *r, Sigma2: *sigma2, Restarts: *restarts, Iters: *iters, Seed: *seed, Workers: o.Workers}
		fit := markov.FitChain
		if model == "hmm-snapshot" {
			fit = markov.FitHMM
		}
		m, err := fit(ctx, src, cfg)
		if err != nil {
			return err
		}
		write = func() error { return m.Write(*out) }
		summary = fmt.Sprintf("%d states, r=%.3g, from %d sets (%d rows), %d passes", m.K, m.R, m.Stats.Sets, m.Stats.Rows, m.Stats.Passes)
	case "ica", "hmm", "multiview":
		if model == "hmm" && o.GroupColumn == "" {
			return usagef("--group-column is required: it names the sequence id of each row")
		}
		src, err := stream.OpenDense(*input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		var m interface{ Write(string) error }
		switch model {
		case "ica":
			m, err = ica.Fit(ctx, src, ica.Config{K: *k, ExactDim: *exactDim, Oversample: *oversample, PowerIters: *powerIters,
				Solver: *solverName, Restarts: *restarts, Iters: *iters, Seed: *seed, Workers: o.Workers})
		case "hmm":
			m, err = hmm.Fit(ctx, src, hmm.Config{K: *k, Windows: *windows, Discrete: *discrete, Solver: *solverName,
				Restarts: *restarts, Iters: *iters, Seed: *seed})
		case "multiview":
			var vs [][]int
			if vs, err = parseViews(*views); err != nil {
				return err
			}
			m, err = multiview.Fit(ctx, src, multiview.Config{K: *k, Views: vs, RandomViews: *randomViews, Solver: *solverName,
				Restarts: *restarts, Iters: *iters, Seed: *seed, Workers: o.Workers})
		}
		if err != nil {
			return err
		}
		write = func() error { return m.Write(*out) }
		summary = fmt.Sprintf("k=%d", *k)
	}
	if err := write(); err != nil {
		return err
	}
	done()
	fmt.Fprintf(os.Stderr, "fit %s: %s in %.1fs → %s\n", model, summary, time.Since(start).Seconds(), *out)
	return nil
}

// parseViews reads "0,1,2;3,4;5,6" into three column groups ("" = default).
func parseViews(s string) ([][]int, error) {
	if s == "" {
		return nil, nil
	}
	var views [][]int
	for _, g := range strings.Split(s, ";") {
		var cols []int
		for _, c := range strings.Split(g, ",") {
			j, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || j < 0 {
				return nil, usagef("--views: %q is not a column index", c)
			}
			cols = append(cols, j)
		}
		views = append(views, cols)
	}
	if len(views) != 3 {
		return nil, usagef("--views: want three groups separated by ';', got %d", len(views))
	}
	return views, nil
}
