package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
)

// fitUsage heads the list of models `streamfit fit` prints when it is not
// given one.
const fitUsage = "usage: streamfit fit MODEL --input FILE --k K --out model.json [flags]\nmodels:\n"

// fitAbout is the help of `fit MODEL`, with the model's name and summary;
// fitAboutEM that of a model that refines by likelihood (--em-passes).
const (
	fitAbout   = "Fits %[1]s from --input in a few passes and writes the model as JSON (atomically).\n%[1]s: %[2]s."
	fitAboutEM = "Fits %[1]s from --input in a few passes, then at most --em-passes more that refine it by likelihood, and writes the model as JSON (atomically).\n%[1]s: %[2]s."
)

// fitFlags are the flags of `fit MODEL`: those every model reads, the
// model's settings (models.Settings), and for the topic models the flags
// of the command line's own (checkpoints, spill, extra outputs).
type fitFlags struct {
	kind       models.Kind
	fs         *flag.FlagSet
	settings   models.Settings
	common     models.Common
	o          *stream.Options
	prog       *progressMode
	input      string
	out        string
	fromStats  string
	cpuProfile string
	noTiming   bool
	topic      *topicFlags // nil for a dense model
	ks         kFlag       // --k, which sets common.K
	sweep      *sweepFlags // nil for a dense model
}

// newFitFlags makes the flag set of `fit MODEL`: the flags every model
// reads, the input flags of its data, then the model's own.
func newFitFlags(e *env, k models.Kind) *fitFlags {
	f := &fitFlags{kind: k, settings: k.Settings(models.FitFlags)}
	fs := flag.NewFlagSet("fit "+k.Name(), flag.ContinueOnError)
	f.fs = fs
	f.o = e.addReadFlags(fs)
	fs.StringVar(&f.input, "input", "", "input file (any format streamfit inspect reads), or a directory of text files")
	fs.StringVar(&f.out, "out", "model.json", "output model file (JSON)")
	f.common.K, f.ks.k = 10, &f.common.K
	fs.Var(&f.ks, "k", "number of topics / components / states (default 10); lda and topic also take a list, 10,20,50, or a range, 10:100:10, fitted in one sweep that shares the passes over the documents and recommends a k")
	fs.Uint64Var(&f.common.Seed, "seed", 1, "random seed (same input and seed give the same model)")
	// The default depends on the model and the fit, which the help says;
	// "" leaves the choice to the model.
	fs.StringVar(&f.common.Solver, "solver", "", "tensor decomposition: "+strings.Join(solver.Names(), ", ")+" (default: the model's; lda/topic: ojd for a pure spectral fit held explicitly, ojd0 above k=64, rtpm above k=128, simultaneous when EM passes follow or the third moment is on disk or sketched; ica: simultaneous; the other models: rtpm)")
	fs.IntVar(&f.common.Restarts, "restarts", 0, "solver restarts per component (default: the solver's own)")
	fs.IntVar(&f.common.Iters, "iters", 0, "solver iterations per phase (default: the solver's own)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole command (Go pprof format) to `FILE`, for go tool pprof")
	fs.StringVar(&f.fromStats, "from-stats", "", "fit from merged statistics of the last pass (streamfit stats, merge) instead of passes over --input; lda/topic and the models with likelihood passes (gmm, hmm): with --input, those passes over it follow (the model of fit --input)")
	fs.BoolVar(&f.noTiming, "no-timing", false, "leave the fit's wall time out of model.json, so the same input and seed give byte-identical files")
	f.prog = addProgressFlag(fs)
	if models.IsDense(k) {
		addDenseFlags(fs, f.o, models.GroupOf(k) != "")
	} else {
		addDocFlags(fs, f.o)
		f.topic = addTopicFlags(fs)
		f.sweep = addSweepFlags(fs)
	}
	f.settings.Flags(fs)
	// The help says what the flags registered above make of the fit.
	about := fitAbout
	if fs.Lookup("em-passes") != nil {
		about = fitAboutEM
	}
	setAbout(fs, "", fmt.Sprintf(about, k.Name(), k.Summary()))
	return f
}

// fitKind returns the model args[0] names, or a usage error listing them.
func fitKind(args []string) (models.Kind, error) {
	if len(args) > 0 {
		if k, err := models.Lookup(args[0]); err == nil {
			return k, nil
		}
	}
	var b strings.Builder
	b.WriteString(fitUsage)
	for _, k := range models.Kinds() {
		fmt.Fprintf(&b, "  %-13s %s\n", k.Name(), k.Summary())
	}
	b.WriteString("Run `streamfit fit MODEL -h` for the flags of one.")
	return nil, usageError{b.String()}
}

// notDefined rewrites the flag package's "flag provided but not defined"
// for `fit MODEL` into a message that says which models read the flag.
func (e *env) notDefined(model string, err error) error {
	name, ok := strings.CutPrefix(err.Error(), unknownFlagPrefix)
	if !ok {
		return err
	}
	name, _, _ = strings.Cut(name, " ")
	name = strings.TrimSuffix(name, ";")
	var readers []string
	for _, k := range models.Kinds() {
		if newFitFlags(e, k).fs.Lookup(name) != nil {
			readers = append(readers, k.Name())
		}
	}
	if len(readers) == 0 {
		return err
	}
	return usagef("--%s is for %s, not %s (see streamfit fit %s -h)", name, strings.Join(readers, ", "), model, model)
}

// parseFit parses the flags of `fit MODEL` (args after the model's name)
// and checks the model's settings.
func (e *env) parseFit(k models.Kind, args []string) (*fitFlags, error) {
	f := newFitFlags(e, k)
	pos, err := e.parse(f.fs, args)
	if err != nil {
		return nil, e.notDefined(k.Name(), err)
	}
	if f.input == "" && len(pos) == 1 {
		f.input = pos[0]
	} else if len(pos) > 0 {
		return nil, usagef("unexpected arguments %q", pos)
	}
	if len(f.ks.ks) > 1 && f.topic == nil {
		return nil, usagef("--k %s: a list of k is for lda and topic; fit %s one k at a time", f.ks.String(), k.Name())
	}
	f.common.Workers = f.o.Workers
	if err := f.settings.Check(models.Check{Given: f.given, Read: f.o, FromStats: f.fromStats != "", Rows: f.input != ""}); err != nil {
		return nil, usageError{err.Error()}
	}
	return f, nil
}

func runFit(ctx context.Context, e *env, args []string) error {
	k, err := fitKind(args)
	if err != nil {
		return err
	}
	f, err := e.parseFit(k, args[1:])
	if err != nil {
		return err
	}
	if ts, ok := f.settings.(*lda.Settings); ok {
		return e.fitTopic(ctx, f, ts)
	}
	return e.fitDense(ctx, f, f.settings.(models.DenseSettings))
}

// given reports whether the flag name was given on the command line.
func (f *fitFlags) given(name string) bool { return set(f.fs, name) }

// checkInput refuses an --input that the fit would not read, or its
// absence, and a --solver that is no solver.
func (f *fitFlags) checkInput() error {
	switch {
	case f.fromStats != "" && f.input != "" && !f.refines():
		return usagef("--from-stats fits from the statistics alone; an --input (or INPUT) does not apply")
	case f.input == "" && f.fromStats == "":
		return usagef("--input is required")
	}
	if f.common.Solver == "" {
		return nil
	}
	if _, err := solver.ByName(f.common.Solver); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// fitDense runs `fit MODEL` for a model of dense rows: the passes of its
// plan over --input, or the fit from the merged statistics of its last
// pass (--from-stats).
func (e *env) fitDense(ctx context.Context, f *fitFlags, s models.DenseSettings) error {
	if err := f.checkInput(); err != nil {
		return err
	}
	stop, err := f.startOutputs(f.input, f.o.VocabPath, f.fromStats)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	p, done := e.startProgress(*f.prog, "fit "+f.kind.Name(), 0)
	defer done()
	f.o.Progress = p
	ctx = models.WithPassLog(ctx, e.densePassLog(p, f.kind.Name(), start))
	var m models.Fitted
	switch {
	case f.fromStats != "" && f.input != "":
		var warn string
		if m, warn, err = refineDenseStats(ctx, f, s); warn != "" {
			e.warn("fit", warn)
		}
	case f.fromStats != "":
		if m, err = fitDenseStats(ctx, f.fromStats, s, f.common); err == nil && !f.given("em-passes") && refinesByDefault(f.kind) {
			e.warn("fit", fmt.Sprintf("the moment fit of %s alone: the likelihood passes that follow it in fit %s --input (the default) read the rows; give them with --input to run them (the model of fit --input), or --em-passes 0 for this one", f.fromStats, f.kind.Name()))
		}
	default:
		m, err = fitDenseRows(ctx, f, s)
	}
	if err != nil {
		return err
	}
	if f.noTiming {
		m.ClearTiming()
	}
	for _, w := range m.Warnings() {
		e.warn("fit", w)
	}
	if err := m.Write(f.out); err != nil {
		return err
	}
	done()
	e.printf("fit %s: %s in %.1fs → %s\n", f.kind.Name(), m.Summary(), time.Since(start).Seconds(), f.out)
	return nil
}

// fitDenseRows fits a model of dense rows from the rows of --input.
func fitDenseRows(ctx context.Context, f *fitFlags, s models.DenseSettings) (models.Fitted, error) {
	src, err := openRows(f, s)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	return s.Fit(ctx, src, f.common)
}

// openRows opens the rows of --input for a fit with s, which may need
// the --group-column of their sequences or sets.
func openRows(f *fitFlags, s models.DenseSettings) (stream.DenseSource, error) {
	if g := s.Passes(f.common).Group; g != "" && f.o.GroupColumn == "" {
		return nil, usagef("--group-column is required: it names the %s id of each row", g)
	}
	return stream.OpenDense(f.input, *f.o)
}

// refines reports whether the fit runs likelihood passes after its moment
// fit (models.RefinementOf): a dense model's EM or Baum–Welch passes.
func (f *fitFlags) refines() bool {
	s, ok := f.settings.(models.DenseSettings)
	return ok && models.RefinementOf(s, f.common) != nil
}

// refinesByDefault reports whether a fit of k at its default settings
// runs likelihood passes after its moment fit (a dense model's EM or
// Baum–Welch passes).
func refinesByDefault(k models.Kind) bool {
	s, ok := k.Settings(models.FitFlags).(models.DenseSettings)
	if !ok {
		return false
	}
	s.Flags(flag.NewFlagSet(k.Name(), flag.ContinueOnError))
	return models.RefinementOf(s, models.Common{}) != nil
}

// refineDenseStats fits a model of dense rows from the merged statistics of
// its moment fit's last pass (--from-stats) and runs its likelihood passes
// over the rows of --input: the model of fit --input, when the statistics
// are those of the moment fit it starts from; from others, a warning
// says the start differs.
func refineDenseStats(ctx context.Context, f *fitFlags, s models.DenseSettings) (models.Fitted, string, error) {
	st, err := implicit.ReadDenseStats(f.fromStats)
	if err != nil {
		return nil, "", err
	}
	// k is the statistics' unless given: a k above what the moments give
	// (k > d for a mixture) was computed at fewer, and is the fit's to say.
	switch c := &f.common; {
	case !f.given("k"):
		c.K = st.Header.K
	case c.K < st.Header.K:
		return nil, "", usagef("--k %d: %s holds the moments of %d components; give --k %d (or more: the likelihood passes start the components the moments do not give)", c.K, f.fromStats, st.Header.K, st.Header.K)
	}
	src, err := openRows(f, s)
	if err != nil {
		return nil, "", err
	}
	defer stream.Close(src)
	r := models.RefinementOf(s, f.common)
	// The passes start from the moment fit the fit of --input takes,
	// whose settings may differ from the moment fit alone's (gmm: a
	// variance per component). From another one they still refine, to
	// a model that may differ from fit --input's.
	var warn string
	if first, err := r.Moments().Plan(f.fromStats).First(st.Header.D); err == nil && !bytes.Equal(first.Header.Params, st.Header.Params) {
		warn = fmt.Sprintf("%s holds another moment fit (settings %s) than the one the likelihood passes of fit %s --input start from (%s): they start from it, and the model may differ from fit --input's; stats %s with those settings gives that start", f.fromStats, st.Header.Params, f.kind.Name(), first.Header.Params, f.kind.Name())
	}
	m, _, err := models.Refine(ctx, r, st, src, f.input, f.o.Workers)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", f.fromStats, err)
	}
	return m, warn, nil
}

// fitDenseStats fits a model of dense rows from the merged statistics of
// its last pass in the file path.
func fitDenseStats(ctx context.Context, path string, s models.DenseSettings, c models.Common) (models.Fitted, error) {
	st, err := implicit.ReadDenseStats(path)
	if err != nil {
		return nil, err
	}
	m, err := s.FitStats(ctx, st, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// inputNamed names the input in an error that cannot (a pass without one
// usable document).
func inputNamed(input string, err error) error {
	if errors.Is(err, implicit.ErrNoDocs) {
		return fmt.Errorf("%s: %w", input, err)
	}
	return err
}

// startCPUProfile starts the runtime's CPU profiler writing to path and
// returns the function that stops it and closes the file. A profile is a
// diagnostic, not an output of the fit, so it is written in place (no
// temporary name).
func startCPUProfile(path string) (stop func(), err error) {
	pf, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// set reports whether the flag name was given on the command line.
func set(fs *flag.FlagSet, name string) bool { return models.Given(fs)(name) }

// startOutputs checks that the outputs overwrite none of the inputs and
// starts the CPU profile when --cpuprofile asks; the caller defers stop.
func (f *fitFlags) startOutputs(inputs ...string) (stop func(), err error) {
	var extra string
	if f.topic != nil {
		extra = f.topic.topicsParquet
	}
	if err := checkOutputs(inputs, f.out, extra, f.cpuProfile); err != nil {
		return nil, err
	}
	if f.cpuProfile == "" {
		return func() {}, nil
	}
	return startCPUProfile(f.cpuProfile)
}
