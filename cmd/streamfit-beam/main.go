// Command streamfit-beam runs a streamfit fit (LDA and the single-topic
// model with their EM passes, or a model of dense sample rows) as an
// Apache Beam pipeline (package beamfit): on prism in this process by
// default, or on Dataflow, Flink or Spark (--runner). See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/beamfit"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/columnar"
	_ "github.com/streamfit/streamfit/stream/docword"
	_ "github.com/streamfit/streamfit/stream/text"
)

// usageError is a mistake in the command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	run, err := parse()
	if err == nil {
		err = run(context.Background())
	}
	var ue usageError
	switch {
	case errors.As(err, &ue) || errors.Is(err, beamfit.ErrUsage) || errors.Is(err, beamfit.ErrNoInput):
		fmt.Fprintf(os.Stderr, "streamfit-beam: %v\n(streamfit-beam -h lists the flags)\n", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "streamfit-beam: %v\n", err)
		os.Exit(1)
	}
}

// parse reads the command line (flag.CommandLine, which also holds Beam's
// runner flags) and returns the run it asks for.
func parse() (func(context.Context) error, error) {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `usage: streamfit-beam [flags] INPUT...

Fits an LDA or single-topic model (with the EM passes of streamfit fit), or
a model of dense sample rows (--model gmm, ica, multiview, hmm, markov,
hmm-snapshot), to the INPUT files (paths, glob patterns or dataset directories of Parquet or Arrow files, any format
streamfit reads) as an Apache Beam pipeline: every
Parquet row group or Arrow IPC record batch (a whole file for other formats)
is a work unit (for hmm, markov and hmm-snapshot the unit where a sequence or
set begins owns all of it); each pass of the fit computes the units' statistics and
merges them exactly (streamfit stats + merge), the next pass taking the
merged statistics as a side input; the last step writes the model (as
streamfit fit --from-stats would) and, with --stats-out, the merged
statistics. With --stats-only 1 or 2 the pipeline writes the merged
statistics of that phase only: the file of streamfit stats --append.

The runner is --runner (default prism, in this process); Beam's own flags
(--endpoint, --environment_type, --environment_config, Dataflow's --project,
--region, --staging_location, ...) are listed below with the others.
Paths are read and written by the workers: give paths every worker sees, or
objects on gs:// and s3:// (files, globs, dataset prefixes; --out and
--stats-out too), read with ranged requests.

flags:
`)
		flag.PrintDefaults()
	}
	o := stream.Options{}
	flag.StringVar(&o.Format, "format", "", "input format (default: detect); one of "+strings.Join(stream.Formats(), ", "))
	flag.StringVar(&o.VocabPath, "vocab", "", "vocabulary file, one word per line (required to tokenize raw text)")
	flag.StringVar(&o.TermsColumn, "terms-column", stream.DefaultTermsColumn, "column of term-id lists (or list<struct<term,count>>)")
	flag.StringVar(&o.CountsColumn, "counts-column", stream.DefaultCountsColumn, "column of count lists")
	flag.StringVar(&o.DocColumn, "doc-column", stream.DefaultDocColumn, "document id column of a long (doc, term, count) table")
	flag.StringVar(&o.TermColumn, "term-column", stream.DefaultTermColumn, "term id column of a long table")
	flag.StringVar(&o.CountColumn, "count-column", stream.DefaultCountColumn, "count column of a long table")
	flag.StringVar(&o.TextColumn, "text-column", stream.DefaultTextColumn, "raw text column")
	flag.IntVar(&o.BatchRows, "batch-rows", stream.DefaultBatchRows, "rows per batch (the same as streamfit stats's for the same statistics)")
	flag.StringVar(&o.TokenPattern, "token-pattern", "", "raw text: regular expression for one token (default: 2+ letters or digits)")
	flag.BoolVar(&o.KeepCase, "keep-case", false, "raw text: do not lower-case")
	flag.StringVar(&o.StopWords, "stop-words", "english", "raw text: english, none, or a file with one stop word per line")
	var s beamfit.Settings
	model := flag.String("model", "lda", "model: lda, topic, or a model of dense sample rows: "+strings.Join(beamfit.DenseModels, ", "))
	flag.IntVar(&s.K, "k", 10, "number of topics (gmm: components)")
	flag.Float64Var(&s.Alpha0, "alpha0", 1, "lda, markov, hmm-snapshot: Dirichlet concentration α₀ (> 0)")
	flag.BoolVar(&s.Differing, "differing", false, "gmm: a variance per component instead of a common σ²")
	flag.Float64Var(&s.Sigma2, "sigma2", 0, "gmm, hmm-snapshot: known common noise variance (0 estimates it)")
	flag.StringVar(&o.ValuesColumn, "values-column", "", "gmm: dense samples' fixed_size_list<float> or list<float> column (default: x, else all numeric columns)")
	flag.Func("columns", "gmm: dense samples' comma-separated numeric columns", func(v string) error {
		o.Columns = strings.Split(v, ",")
		return nil
	})
	flag.StringVar(&o.GroupColumn, "group-column", "", "hmm, markov, hmm-snapshot: integer sequence/set id column of the dense samples")
	flag.Float64Var(&s.R, "r", 0, "markov, hmm-snapshot: the snapshot rate r (0: find it by the projection-distance scan)")
	views := flag.String("views", "", `multiview: column groups of the three views, e.g. "0,1,2;3,4;5,6" (default: an equal split), or "rotate"`)
	flag.BoolVar(&s.RandomViews, "random-views", false, "multiview: a seeded random split of the columns into three views")
	flag.BoolVar(&s.Windows, "windows", false, "hmm: use every window of three steps, not only the first three of each sequence")
	flag.BoolVar(&s.Discrete, "discrete", false, "hmm: observations are one-hot symbols")
	flag.Uint64Var(&s.Seed, "seed", 1, "random seed (the sketch Ω and the solver's restarts)")
	flag.IntVar(&s.Oversample, "oversample", 0, "extra sketch columns beyond k (lda, topic, gmm, ica; 0: the default, 10)")
	flag.IntVar(&s.PowerIters, "power-iters", 0, "power passes of the randomized whitening: 0 as the default fit (lda, topic: one when the first sketch does not decay; gmm, ica: 2), -1 none, N exactly N")
	flag.IntVar(&s.ExactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size or dimension d, above it through a randomized sketch (lda, topic, gmm, ica; 0: default, -1: never)")
	flag.IntVar(&s.Workers, "workers", 0, "goroutines per work unit on a worker: decoding, accumulation and the final solve (default: one per CPU)")
	flag.StringVar(&s.Solver, "solver", "", "tensor decomposition of the final fit (default: rtpm)")
	flag.IntVar(&s.Refine, "als-sweeps", 0, "CP-ALS sweeps on the tensor after the solver (fit --als-sweeps)")
	flag.IntVar(&s.Restarts, "restarts", 0, "solver restarts per component (0: solver default)")
	flag.IntVar(&s.Iters, "iters", 0, "solver iterations per phase (0: solver default)")
	flag.IntVar(&s.EMPasses, "em-passes", 10, "lda, topic: cap on the EM passes that refine the spectral fit by likelihood, as streamfit fit's (0: the pure spectral fit)")
	flag.Float64Var(&s.EMTol, "em-tol", lda.DefaultEMTol, "lda, topic: stop the EM passes when the training bound improved by less than this (> 0), relatively, in a pass")
	flag.BoolVar(&s.EMAlpha, "em-alpha", true, "lda: re-estimate α in every EM pass; false keeps the spectral α̂")
	var out beamfit.Output
	flag.StringVar(&out.Model, "out", "model.json", "output model file (JSON), written atomically by the last step")
	flag.StringVar(&out.Stats, "stats-out", "", "also write the merged statistics of the last phase (phase 2, or the --stats-only phase) to this file")
	flag.BoolVar(&out.NoTiming, "no-timing", false, "leave the fit's wall time out of model.json, so the same input and seed give byte-identical files")
	statsOnly := flag.Int("stats-only", 0, "1 or 2: end after that phase and write its merged statistics to --stats-out (no model)")
	verbose := flag.Bool("verbose", false, "print the runner's log lines (prism logs at level INFO)")
	flag.Parse()
	// A worker that a runner starts from this binary (Beam's --worker) runs
	// the harness and exits here; the launcher goes on.
	beam.Init()
	if !*verbose {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	if *runners.Runner == "" {
		*runners.Runner = "prism"
	}
	switch {
	case flag.NArg() == 0:
		return nil, usagef("at least one INPUT file is required")
	case *model != "lda" && *model != "topic" && !slices.Contains(beamfit.DenseModels, *model):
		return nil, usagef("--model=%s: want lda, topic or one of %s", *model, strings.Join(beamfit.DenseModels, ", "))
	case (*model == "hmm" || *model == "markov" || *model == "hmm-snapshot") && o.GroupColumn == "":
		return nil, usagef("--model %s needs --group-column (the sequence or set id of each row)", *model)
	case s.R < 0 || s.R > 1:
		return nil, usagef("--r=%g: the snapshot rate must be in (0, 1] (0 scans for it)", s.R)
	case s.K < 1:
		return nil, usagef("--k=%d: need at least one topic (component)", s.K)
	case s.Sigma2 < 0 || math.IsInf(s.Sigma2, 1) || math.IsNaN(s.Sigma2):
		return nil, usagef("--sigma2=%g: a variance must be finite and ≥ 0 (0 estimates it)", s.Sigma2)
	case *model == "lda" && (!(s.Alpha0 > 0) || math.IsInf(s.Alpha0, 1)):
		return nil, usagef("--alpha0=%g: the Dirichlet concentration must be a finite number > 0", s.Alpha0)
	case s.EMPasses < 0 || !(s.EMTol > 0) || math.IsInf(s.EMTol, 1):
		return nil, usagef("--em-passes=%d, --em-tol=%g: want a pass cap ≥ 0 and a finite tolerance > 0", s.EMPasses, s.EMTol)
	case *statsOnly < 0 || *statsOnly > 2:
		return nil, usagef("--stats-only=%d: want 1 or 2", *statsOnly)
	case *statsOnly > 0 && out.Stats == "":
		return nil, usagef("--stats-only %d needs --stats-out FILE", *statsOnly)
	case *statsOnly > 0 && set("out"):
		return nil, usagef("--stats-only writes no model: drop --out")
	}
	s.Single = *model == "topic"
	if slices.Contains(beamfit.DenseModels, *model) {
		s.Model = *model
		s.EMPasses = 0
		var err error
		if s.Views, s.Rotate, err = multiview.ParseViews(*views); err != nil {
			return nil, usagef("--views: %v", err)
		}
	}
	if *statsOnly > 0 {
		s.EMPasses = 0
	}
	o.Workers = s.Workers
	if *statsOnly > 0 {
		out.Model = ""
	}
	return func(ctx context.Context) error {
		files, err := beamfit.Expand(flag.Args())
		if err != nil {
			return err
		}
		// Workers run elsewhere, in another directory: they get absolute
		// paths (objects on gs:// and s3:// as they are).
		for _, p := range append([]*string{&out.Model, &out.Stats, &o.VocabPath}, ptrs(files)...) {
			if *p = beamfit.LocalPath(*p); *p != "" && !beamfit.Remote(*p) {
				if *p, err = filepath.Abs(*p); err != nil {
					return err
				}
			}
		}
		err = beamfit.Run(ctx, *runners.Runner, files, beamfit.Options{Read: o, Fit: s, StatsOnly: *statsOnly, Out: out})
		if err != nil {
			return err
		}
		for _, f := range []string{out.Model, out.Stats} {
			if f != "" {
				fmt.Fprintf(os.Stderr, "streamfit-beam: %d input file(s) → %s\n", len(files), f)
			}
		}
		return nil
	}, nil
}

// ptrs returns pointers to the elements of s.
func ptrs(s []string) []*string {
	p := make([]*string, len(s))
	for i := range s {
		p[i] = &s[i]
	}
	return p
}

// set reports whether the flag name was given on the command line.
func set(name string) bool {
	found := false
	flag.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// Keep the runners of beamx registered: prism (the default), Dataflow,
// Flink, Spark and the universal (portable) runner.
var _ = beamx.Run
