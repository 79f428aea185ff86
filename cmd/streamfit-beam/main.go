// Command streamfit-beam runs a streamfit fit (LDA and the single-topic
// model with their EM passes, or a model of dense sample rows, GMM's EM
// and the discrete HMM's Baum–Welch passes included) as an
// Apache Beam pipeline (package beamfit): on prism in this process by
// default, or on Dataflow, Flink or Spark (--runner). See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/beamfit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/report"
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

// usageText heads the help of streamfit-beam; the flags follow.
const usageText = `usage: streamfit-beam [--model MODEL] [flags] INPUT...

Fits a model (--model: %s; lda by default) to the
INPUT files (paths, glob patterns or dataset directories of Parquet or Arrow
files, any format streamfit reads) as an Apache Beam pipeline: every Parquet
row group or Arrow IPC record batch (a whole file for other formats) is a
work unit (for the models that read groups of rows in order, the unit where
a sequence or set begins owns all of it); each pass of the fit computes the
units' statistics and merges them exactly (streamfit stats + merge), the
next pass taking the merged statistics as a side input; the last step writes
the model (as streamfit fit --from-stats would, with lda, topic, gmm and
hmm --discrete the likelihood passes streamfit fit runs, --em-passes) and,
with --stats-out, the merged statistics (of the passes before those). With
--stats-only 1 or 2 the pipeline writes the merged statistics of that
phase of a topic model only: the file of streamfit stats --append. A list of
--k (lda, topic: 10,20,50 or 10:100:10) fits every k from the statistics of
the sweep, with EM stages whose reads serve every k: a model file per k
(--out 'model-k{k}.json'), scored with --heldout TEST --scores FILE.

The flags below are those of the model --model names (streamfit-beam
--model gmm -h lists GMM's). The runner is --runner (default prism, in this
process); Beam's own flags (--endpoint, --environment_type,
--environment_config, Dataflow's --project, --region, --staging_location,
...) are listed with the others. Paths are read and written by the workers:
give paths every worker sees, or objects on gs:// and s3:// (files, globs,
dataset prefixes; --out and --stats-out too), read with ranged requests.

flags:
`

// modelArg returns the value of --model in args (the command line), or
// LDA's name: the model's flags are registered before the command line is parsed.
func modelArg(args []string) string {
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-")
		switch {
		case a == "-model" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-model="):
			return strings.TrimPrefix(a, "-model=")
		case a == "--":
			return lda.Kind.Name()
		}
	}
	return lda.Kind.Name()
}

// parse reads the command line (flag.CommandLine, which also holds Beam's
// runner flags) and returns the run it asks for.
func parse() (func(context.Context) error, error) {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), usageText, strings.Join(models.Names(nil), ", "))
		flag.PrintDefaults()
	}
	model := flag.String("model", lda.Kind.Name(), "the model: "+strings.Join(models.Names(nil), ", "))
	k, err := models.Lookup(modelArg(os.Args[1:]))
	if err != nil {
		return nil, usageError{err.Error()}
	}
	s, check, err := beamfit.Bind(flag.CommandLine, k.Name())
	if err != nil {
		return nil, err
	}
	o := readFlags(k)
	var out beamfit.Output
	flag.StringVar(&out.Model, "out", "model.json", "output model file (JSON), written atomically by the last step")
	flag.StringVar(&out.Stats, "stats-out", "", "also write the merged statistics of the last phase (phase 2, or the --stats-only phase) to this file")
	flag.BoolVar(&out.NoTiming, "no-timing", false, "leave the fit's wall time out of model.json, so the same input and seed give byte-identical files")
	statsOnly := flag.Int("stats-only", 0, "1 or 2: end after that phase and write its merged statistics to --stats-out (no model)")
	if !models.IsDense(k) {
		flag.StringVar(&out.HeldOut, "heldout", "", "with a list of --k: the held-out documents every k is scored on (held-out perplexity; the coherence of its topics over the INPUTs), into --scores")
		flag.StringVar(&out.Scores, "scores", "", "with --heldout: write the scores of every k and the recommended k to this file (the JSON of streamfit fit --k LIST --json, which streamfit report --sweep draws)")
	}
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
	if err := checkFlags(k, *model, s, check, o, out, *statsOnly); err != nil {
		return nil, err
	}
	if *statsOnly > 0 {
		s.EMPasses, out.Model = 0, ""
	}
	o.Workers = s.Workers
	return func(ctx context.Context) error { return runPipeline(ctx, *o, *s, out, *statsOnly) }, nil
}

// readFlags registers the flags of how the inputs are read: documents for
// a topic model, dense rows (with the group column of the models that read
// groups of rows in order) for the others.
func readFlags(k models.Kind) *stream.Options {
	o := &stream.Options{}
	flag.StringVar(&o.Format, "format", "", "input format (default: detect); one of "+strings.Join(stream.Formats(), ", "))
	// The same as streamfit stats's for the same statistics.
	stream.BatchFlags(flag.CommandLine, o)
	if models.IsDense(k) {
		stream.DenseFlags(flag.CommandLine, o, models.GroupOf(k) != "")
	} else {
		stream.DocFlags(flag.CommandLine, o)
	}
	return o
}

// checkFlags refuses command lines that describe no pipeline, as usage
// errors.
func checkFlags(k models.Kind, model string, s *beamfit.Settings, check func() error, o *stream.Options, out beamfit.Output, statsOnly int) error {
	switch {
	case flag.NArg() == 0:
		return usagef("at least one INPUT file is required")
	case model != modelArg(os.Args[1:]):
		return usagef("--model=%s: give --model once", model)
	case models.GroupOf(k) != "" && o.GroupColumn == "":
		return usagef("--model %s needs --group-column (the %s id of each row)", model, models.GroupOf(k))
	case s.K < 1:
		return usagef("--k=%d: need at least one topic (component)", s.K)
	case statsOnly < 0 || statsOnly > 2:
		return usagef("--stats-only=%d: want 1 or 2", statsOnly)
	case statsOnly > 0 && out.Stats == "":
		return usagef("--stats-only %d needs --stats-out FILE", statsOnly)
	case statsOnly > 0 && set("out"):
		return usagef("--stats-only writes no model: drop --out")
	}
	if err := check(); err != nil {
		return err
	}
	return checkSweep(s, out, statsOnly)
}

// checkSweep refuses the flags of a sweep over k (--k LIST) without one,
// and those a sweep does not serve.
func checkSweep(s *beamfit.Settings, out beamfit.Output, statsOnly int) error {
	sweep := len(s.Ks) > 1
	switch {
	case !sweep && (out.HeldOut != "" || out.Scores != ""):
		return usagef("--heldout and --scores score the models of a sweep: give a list of --k, such as 10,20,50")
	case out.HeldOut != "" && out.Scores == "":
		return usagef("--heldout needs --scores FILE: the scores and the recommended k are written there")
	case out.Scores != "" && out.HeldOut == "":
		return usagef("--scores needs --heldout TEST: the statistics hold every document of the INPUTs, so none can be held out")
	case statsOnly > 0 && out.HeldOut != "":
		return usagef("--stats-only fits no model to score: drop --heldout and --scores")
	}
	return nil
}

// runPipeline expands the inputs and runs the pipeline over them.
func runPipeline(ctx context.Context, o stream.Options, s beamfit.Settings, out beamfit.Output, statsOnly int) error {
	files, err := beamfit.Expand(flag.Args())
	if err != nil {
		return err
	}
	// Workers run elsewhere, in another directory: they get absolute
	// paths (objects on gs:// and s3:// as they are).
	for _, p := range append([]*string{&out.Model, &out.Stats, &out.HeldOut, &out.Scores, &o.VocabPath}, ptrs(files)...) {
		if *p = beamfit.LocalPath(*p); *p != "" && !beamfit.Remote(*p) {
			if *p, err = filepath.Abs(*p); err != nil {
				return err
			}
		}
	}
	err = beamfit.Run(ctx, *runners.Runner, files, beamfit.Options{Read: o, Fit: s, StatsOnly: statsOnly, Out: out})
	if err != nil {
		return err
	}
	written := []string{out.Stats, out.Model}
	if len(s.Ks) > 1 && out.Model != "" {
		written = written[:1]
		for _, k := range s.Ks {
			written = append(written, lda.SweepOut(out.Model, k))
		}
	}
	written = append(written, out.Scores)
	for _, f := range written {
		if f != "" {
			fmt.Fprintf(os.Stderr, "streamfit-beam: %d input file(s) → %s\n", len(files), f)
		}
	}
	if out.Scores != "" && !beamfit.Remote(out.Scores) {
		sw, err := report.ReadSweep(out.Scores)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "streamfit-beam: recommended k=%d: %s (held out: %s)\n", sw.Recommended, sw.Rule, out.HeldOut)
	}
	return nil
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
func set(name string) bool { return models.Given(flag.CommandLine)(name) }

// Keep the runners of beamx registered: prism (the default), Dataflow,
// Flink, Spark and the universal (portable) runner.
var _ = beamx.Run
