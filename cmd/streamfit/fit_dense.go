package main

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
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
	if f.fromStats != "" && !isDense(model) {
		return nil, "", usagef("--from-stats: %s has no statistics route (models with one: lda, topic, %s)", model, denseModelList())
	}
	switch model {
	case "gmm":
		cfg := gmm.Config{K: f.k, Differing: f.differing, Sigma2: f.sigma2, ExactDim: f.exactDim,
			Oversample: f.oversample, PowerIters: f.powerIters, Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}
		var m *gmm.Model
		if f.fromStats != "" {
			if m, err = fromStats(ctx, f.fromStats, cfg, gmm.FitStats); err != nil {
				return nil, "", err
			}
		} else {
			src, err := stream.OpenDense(f.input, *o)
			if err != nil {
				return nil, "", err
			}
			defer stream.Close(src)
			if m, err = gmm.Fit(ctx, src, cfg); err != nil {
				return nil, "", err
			}
		}
		if f.noTiming {
			m.Stats.Seconds = 0
		}
		write, warnings = func() error { return m.Write(f.out) }, m.Stats.Warnings
		summary = fmt.Sprintf("%d components in d=%d from %d rows, %d passes (%s)", m.K, m.D, m.Stats.Rows, m.Stats.Passes, m.Stats.Method)
	case "markov", "hmm-snapshot":
		cfg := markov.Config{K: f.k, Alpha0: f.alpha0, R: f.r, Sigma2: f.sigma2, Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}
		var m *markov.Model
		if f.fromStats != "" {
			if m, err = fromStats(ctx, f.fromStats, cfg, markov.FitStats); err != nil {
				return nil, "", err
			}
		} else {
			if o.GroupColumn == "" {
				return nil, "", usagef("--group-column is required: it names the set id of each row")
			}
			src, err := stream.OpenDense(f.input, *o)
			if err != nil {
				return nil, "", err
			}
			defer stream.Close(src)
			fit := markov.FitChain
			if model == "hmm-snapshot" {
				fit = markov.FitHMM
			}
			if m, err = fit(ctx, src, cfg); err != nil {
				return nil, "", err
			}
		}
		if f.noTiming {
			m.Stats.Seconds = 0
		}
		write, warnings = func() error { return m.Write(f.out) }, m.Stats.Warnings
		how := "given"
		if m.Stats.RScanned {
			how = "scanned"
		}
		summary = fmt.Sprintf("%d states, r=%.3g (%s), from %d sets (%d rows), %d passes", m.K, m.R, how, m.Stats.Sets, m.Stats.Rows, m.Stats.Passes)
	case "ica", "hmm", "multiview":
		if model == "hmm" && o.GroupColumn == "" && f.fromStats == "" {
			return nil, "", usagef("--group-column is required: it names the sequence id of each row")
		}
		var src stream.DenseSource
		if f.fromStats == "" {
			if src, err = stream.OpenDense(f.input, *o); err != nil {
				return nil, "", err
			}
			defer stream.Close(src)
		}
		var m interface{ Write(string) error }
		k := f.k // the statistics' k with --from-stats
		switch model {
		case "ica":
			cfg := ica.Config{K: f.k, ExactDim: f.exactDim, Oversample: f.oversample, PowerIters: f.powerIters,
				Solver: f.solverName, Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}
			var im *ica.Model
			if im, err = fitOrFromStats(ctx, f.fromStats, src, cfg, ica.Fit, ica.FitStats); err == nil {
				if f.noTiming {
					im.Stats.Seconds = 0
				}
				m, warnings, k = im, im.Stats.Warnings, im.K
			}
		case "hmm":
			cfg := hmm.Config{K: f.k, Windows: f.windows, Discrete: f.discrete, Solver: f.solverName,
				Restarts: f.restarts, Iters: f.iters, Seed: f.seed}
			var hm *hmm.Model
			if hm, err = fitOrFromStats(ctx, f.fromStats, src, cfg, hmm.Fit, hmm.FitStats); err == nil {
				if f.noTiming {
					hm.Stats.Seconds = 0
				}
				m, warnings, k = hm, hm.Stats.Warnings, hm.K
			}
		case "multiview":
			var vs [][]int
			var rotate bool
			if vs, rotate, err = parseViews(f.views); err != nil {
				return nil, "", err
			}
			cfg := multiview.Config{K: f.k, Views: vs, RandomViews: f.randomViews, Rotate: rotate, Solver: f.solverName,
				Restarts: f.restarts, Iters: f.iters, Seed: f.seed, Workers: o.Workers}
			var mm *multiview.Model
			if mm, err = fitOrFromStats(ctx, f.fromStats, src, cfg, multiview.Fit, multiview.FitStats); err == nil {
				if f.noTiming {
					mm.Stats.Seconds = 0
				}
				m, warnings, k = mm, mm.Stats.Warnings, mm.K
			}
		}
		if err != nil {
			return nil, "", err
		}
		write = func() error { return m.Write(f.out) }
		summary = fmt.Sprintf("k=%d", k)
	default:
		return nil, "", usagef("unknown model %q", model)
	}
	for _, w := range warnings {
		warn("fit", w)
	}
	return write, summary, nil
}

// parseViews reads the --views flag (multiview.ParseViews).
func parseViews(s string) (views [][]int, rotate bool, err error) {
	if views, rotate, err = multiview.ParseViews(s); err != nil {
		return nil, false, usagef("--views: %v", err)
	}
	return views, rotate, nil
}

// fitOrFromStats fits cfg on the statistics file at statsPath with fitStats
// when --from-stats names one, else on the samples of src with fit.
func fitOrFromStats[C, M any](ctx context.Context, statsPath string, src stream.DenseSource, cfg C,
	fit func(context.Context, stream.DenseSource, C) (M, error),
	fitStats func(context.Context, *implicit.DenseStats, C) (M, error)) (M, error) {
	if statsPath != "" {
		return fromStats(ctx, statsPath, cfg, fitStats)
	}
	return fit(ctx, src, cfg)
}

// fromStats fits a dense model with cfg from the merged statistics of its
// last pass in the file path.
func fromStats[C, M any](ctx context.Context, path string, cfg C, fit func(context.Context, *implicit.DenseStats, C) (M, error)) (M, error) {
	var zero M
	st, err := implicit.ReadDenseStats(path)
	if err != nil {
		return zero, err
	}
	m, err := fit(ctx, st, cfg)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
