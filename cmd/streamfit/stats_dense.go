package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// denseStatsFlags are the flags of stats that set a dense model's fit.
type denseStatsFlags struct {
	differing   *bool
	sigma2      *float64
	views       *string
	randomViews *bool
	windows     *bool
	solverName  *string
	restarts    *int
	iters       *int
}

func addDenseStatsFlags(fs *flag.FlagSet) denseStatsFlags {
	return denseStatsFlags{
		differing:   fs.Bool("differing", false, "gmm: a variance per component"),
		sigma2:      fs.Float64("sigma2", 0, "gmm: known common variance; hmm-snapshot: observation noise variance (0: estimate it)"),
		views:       fs.String("views", "", `multiview: column groups of the three views, e.g. "0,1,2;3,4;5,6", or "rotate" (see fit)`),
		randomViews: fs.Bool("random-views", false, "multiview: a seeded random split of the columns into three views"),
		windows:     fs.Bool("windows", false, "hmm: every window of three steps, not only the first three of each sequence"),
		solverName:  fs.String("solver", "rtpm", "ica: the tensor solver, whose answer the polishing passes start from (as fit's)"),
		restarts:    fs.Int("restarts", 0, "ica: solver restarts (as fit's)"),
		iters:       fs.Int("iters", 0, "ica: solver iterations (as fit's)"),
	}
}

// denseWorkflow returns the shard workflow of model with the settings of
// the flags (a basis or appended file's settings override them); exactDim,
// oversample and powerIters choose and tune the sketched path of gmm and
// ica as fit's flags do.
func denseWorkflow(model string, k, exactDim, oversample, powerIters int, seed uint64, alpha0 float64, df denseStatsFlags) (shard.Dense, error) {
	switch model {
	case "gmm":
		if *df.sigma2 < 0 {
			return shard.Dense{}, usagef("--sigma2=%g: a variance cannot be negative (0 estimates it)", *df.sigma2)
		}
		return shard.GMM(gmm.Config{K: k, Differing: *df.differing, Sigma2: *df.sigma2, ExactDim: exactDim, Oversample: oversample, PowerIters: powerIters, Seed: seed}), nil
	case "multiview":
		vs, rotate, err := parseViews(*df.views)
		if err != nil {
			return shard.Dense{}, err
		}
		return shard.Multiview(multiview.Config{K: k, Views: vs, RandomViews: *df.randomViews, Rotate: rotate, Seed: seed}), nil
	case "hmm":
		return shard.HMM(hmm.Config{K: k, Windows: *df.windows}), nil
	case "markov", "hmm-snapshot":
		if !(alpha0 > 0) {
			return shard.Dense{}, usagef("--alpha0=%g: the Dirichlet concentration of the set proportions must be positive", alpha0)
		}
		return shard.Markov(markov.Config{K: k, Alpha0: alpha0, Sigma2: *df.sigma2}, model == "markov"), nil
	case "ica":
		return shard.ICA(ica.Config{K: k, ExactDim: exactDim, Oversample: oversample, PowerIters: powerIters, Solver: *df.solverName, Restarts: *df.restarts, Iters: *df.iters, Seed: seed}), nil
	}
	return shard.Dense{}, usagef("unknown model %q", model)
}

// shardParts lists the parts of the inputs that sel selects.
func shardParts(inputs []string, sel shardSel) []shard.Part {
	parts := make([]shard.Part, len(inputs))
	for i, in := range inputs {
		parts[i] = shard.Part{Path: in, Rows: sel.docs, Pieces: sel.pieces}
	}
	return parts
}

// runDenseStats is `streamfit stats` for a dense model: the pass phase
// (after the merged statistics basis), or an append to the file last.
func runDenseStats(ctx context.Context, wf shard.Dense, model, phase, basis, last, out string, driftTol float64, inputs []string, o stream.Options, sel shardSel, prog progressMode) error {
	p, done := startProgress(prog, "stats", 0)
	defer done()
	o.Progress = p
	parts := shardParts(inputs, sel)
	if last != "" {
		total, err := implicit.ReadDenseStats(last)
		if err != nil {
			return err
		}
		var updated *implicit.DenseStats
		if basis != "" {
			if updated, err = implicit.ReadDenseStats(basis); err != nil {
				return err
			}
		}
		sum, angle, err := wf.Append(ctx, total, parts, o, updated, driftTol)
		if errors.Is(err, shard.ErrDrift) {
			return fmt.Errorf("%w: recompute pass %d over all the inputs with --basis %s", err, total.Header.Phase, quoteArg(basis))
		}
		if err != nil {
			return appendErr(err, last)
		}
		if updated != nil {
			fmt.Fprintf(statsOut, "stats: basis drift %.3g rad ≤ %g: appending with the basis of %s\n", angle, driftTol, last)
		}
		if err := implicit.WriteDenseStats(ctx, out, sum); err != nil {
			return err
		}
		done()
		fmt.Fprintf(statsOut, "stats: appended %d input file(s) to %s (pass %d of %s, %d inputs, %d rows) → %s\n", len(inputs), last, sum.Header.Phase, model, len(sum.Header.Inputs), sum.Rows, out)
		return nil
	}
	n, err := strconv.Atoi(phase)
	if err != nil || n < 1 {
		return usagef("--phase=%s: %s's passes are numbered 1, 2, ...", phase, model)
	}
	var base *implicit.DenseStats
	switch {
	case n == 1 && basis != "":
		return usagef("--basis is for the passes after the first")
	case n > 1 && basis == "":
		return usagef("--phase %d needs --basis: the merged statistics of pass %d", n, n-1)
	case n > 1:
		if base, err = implicit.ReadDenseStats(basis); err != nil {
			return err
		}
		if base.Header.Phase != n-1 {
			return usagef("--phase %d needs the statistics of pass %d as --basis, but %s holds pass %d", n, n-1, basis, base.Header.Phase)
		}
	}
	st, err := wf.Stats(ctx, parts, o, base)
	if err != nil {
		return denseErr(err)
	}
	if err := implicit.WriteDenseStats(ctx, out, st); err != nil {
		return err
	}
	done()
	fmt.Fprintf(statsOut, "stats: pass %d of %s (d=%d, k=%d) from %d input file(s), %d rows → %s\n", n, model, st.Header.D, st.Header.K, len(inputs), st.Rows, out)
	return denseNext(ctx, wf, st, out)
}

// denseErr makes a range of row groups beyond the file a usage error.
func denseErr(err error) error {
	if errors.Is(err, shard.ErrRange) {
		return usageError{"--row-groups: " + err.Error()}
	}
	return err
}

// denseNext prints what follows the statistics st (in the file out): the
// next pass, or the fit. Whether a pass is the last may depend on the
// merged statistics of all the shards (ICA's polishing converges); when
// this shard's do not tell, both are printed.
func denseNext(ctx context.Context, wf shard.Dense, st *implicit.DenseStats, out string) error {
	fit := fmt.Sprintf("streamfit fit %s --from-stats %s", st.Header.Model, quoteArg(out))
	next := fmt.Sprintf("streamfit stats --model %s --phase %d --basis %s SHARD-INPUT...", st.Header.Model, st.Header.Phase+1, quoteArg(out))
	last, err := wf.Last(ctx, st)
	switch {
	case err != nil:
		fmt.Fprintf(statsOut, "next, with the statistics merged over all the shards (here %s): %s, or, when stats on the merged file says it is the last pass, %s\n", quoteArg(out), next, fit)
	case last:
		fmt.Fprintf(statsOut, "next (merged over all the shards): %s\n", fit)
	default:
		fmt.Fprintf(statsOut, "next, on every shard (with these statistics merged over all the shards as --basis): %s\n", next)
	}
	return nil
}

// isDense reports whether model is one of shard.DenseModels.
func isDense(model string) bool { return slices.Contains(shard.DenseModels, model) }

// denseModelList names the dense models for help texts.
func denseModelList() string { return strings.Join(shard.DenseModels, ", ") }
