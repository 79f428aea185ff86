package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("fit", "fit a model by the method of moments: fit lda|topic|gmm|markov|hmm-snapshot|ica|hmm|multiview", runFit)
}

// fitModel is a model `fit` knows: its name, its one-line description, and
// the function that registers the flags it reads beyond those of every model
// (a flag another model reads is then a usage error, not silently ignored).
type fitModel struct {
	name, about string
	flags       func(f *fitFlags, fs *flag.FlagSet)
}

// fitModels lists the models `fit` knows.
var fitModels = []fitModel{
	{"lda", "latent Dirichlet allocation on bag-of-words documents (α₀ given)", func(f *fitFlags, fs *flag.FlagSet) {
		fs.Float64Var(&f.alpha0, "alpha0", 1, "Dirichlet concentration α₀ of the topic mixture, a finite number > 0")
		f.addTopicFlags(fs)
	}},
	{"topic", "exchangeable single-topic model on bag-of-words documents", (*fitFlags).addTopicFlags},
	{"gmm", "spherical Gaussian mixture on dense samples (common or differing variances)", func(f *fitFlags, fs *flag.FlagSet) {
		addDenseFlags(fs, f.o, false)
		f.addWhiteningFlags(fs)
		fs.BoolVar(&f.differing, "differing", false, "a variance per component")
		fs.Float64Var(&f.sigma2, "sigma2", 0, "known common variance (0: estimate it; negative is an error)")
	}},
	{"markov", "Markov chain from unordered snapshots: one-hot rows grouped into sets by --group-column", (*fitFlags).addSnapshotFlags},
	{"hmm-snapshot", "HMM from unordered snapshots: observation rows grouped into sets by --group-column", func(f *fitFlags, fs *flag.FlagSet) {
		f.addSnapshotFlags(fs)
		fs.Float64Var(&f.sigma2, "sigma2", 0, "observation noise variance (0: estimate it; negative is an error)")
	}},
	{"ica", "independent component analysis by the fourth cumulant on dense samples", func(f *fitFlags, fs *flag.FlagSet) {
		addDenseFlags(fs, f.o, false)
		f.addWhiteningFlags(fs)
	}},
	{"hmm", "hidden Markov model from sequences: one row per time step, sequence id in --group-column", func(f *fitFlags, fs *flag.FlagSet) {
		addDenseFlags(fs, f.o, true)
		fs.BoolVar(&f.windows, "windows", false, "use every window of three steps, not only the first three of each sequence")
		fs.BoolVar(&f.discrete, "discrete", false, "observations are one-hot symbols (project O's columns onto the simplex)")
	}},
	{"multiview", "multi-view mixture: three views given as column groups (--views) or an equal split", func(f *fitFlags, fs *flag.FlagSet) {
		addDenseFlags(fs, f.o, false)
		fs.StringVar(&f.views, "views", "", `column groups of the three views, e.g. "0,1,2;3,4;5,6" (default: an equal split), or "rotate": a seeded random rotation of the rows, then the equal split (004 Prop 3.3)`)
		fs.BoolVar(&f.randomViews, "random-views", false, "a seeded random split of the columns into three views (mixtures of product distributions)")
	}},
}

// addTopicFlags registers the flags of the topic models (lda, topic): the
// document input, the whitening, the plan of the third moment, statistics,
// checkpoints and the extra outputs.
func (f *fitFlags) addTopicFlags(fs *flag.FlagSet) {
	addDocFlags(fs, f.o)
	fs.IntVar(&f.alsSweeps, "als-sweeps", 0, "CP-ALS sweeps on the whitened tensor after the solver (not the likelihood refinement: see --em-passes)")
	fs.IntVar(&f.emPasses, "em-passes", defaultEMPasses, "cap on the variational EM passes over --input that refine the spectral fit by likelihood (0: the pure spectral fit)")
	fs.Float64Var(&f.emTol, "em-tol", lda.DefaultEMTol, "stop the EM passes when the training bound improved by less than this (> 0), relatively, in a pass")
	fs.Int64Var(&f.emSample, "em-sample", 0, "batch EM on a corpus of more tokens: the first passes run on a seeded sample of the documents of about this many tokens, held in memory, until they converge on it; then --em-full-passes read every document (0: the larger of 2^22 and 4 per topic-word parameter, 4·d·k; -1: every pass reads every document)")
	fs.Int64Var(&f.cubeSample, "cube-sample", 0, cubeSampleHelp)
	fs.IntVar(&f.emFullPasses, "em-full-passes", lda.DefaultFullPasses, "batch EM on a sampled corpus (--em-sample): the passes over every document after the sample's (0: none; the sample's passes give the model)")
	fs.StringVar(&f.emMode, "em", "batch", "the EM passes: batch (one M-step per pass, over-relaxed; the statistics route and Beam run these) or online (an M-step after every --em-minibatch documents, step size (--em-tau0 + t)^-(--em-kappa))")
	fs.IntVar(&f.emMiniBatch, "em-minibatch", lda.DefaultMiniBatch, "--em online: documents per M-step")
	fs.Float64Var(&f.emKappa, "em-kappa", lda.DefaultKappa, "--em online: the step size's decay exponent, in (0.5, 1]")
	fs.Float64Var(&f.emTau0, "em-tau0", lda.DefaultTau0, "--em online: the step size's delay (> 0); larger keeps more of the spectral start in the first steps")
	fs.BoolVar(&f.emAlpha, "em-alpha", true, "lda: re-estimate α in every EM pass (Minka's fixed point); false keeps the spectral α̂")
	fs.BoolVar(&f.emStart, "em-start", false, "lda/topic, with --from-stats of the last spectral phase and no --input: write the start the default fit's EM passes refine (its spectral fit solved as when EM passes follow), for EM passes run shard by shard (stats --phase em --model)")
	fs.StringVar(&f.emModel, "model", "", "with --from-stats of an EM pass's merged statistics (stats --phase em): the model the pass started from; the M-step gives the next model")
	fs.IntVar(&f.powerIters, "power-iters", 0, "power passes of the randomized whitening, each one more pass (0 adds one when the first sketch does not decay, -1 never does)")
	f.addWhiteningFlags(fs)
	fs.BoolVar(&f.implicitOp, "implicit", false, "the same as --plan implicit")
	fs.StringVar(&f.plan, "plan", "auto", "how to hold the third moment: auto (chosen from k, the vocabulary, the documents and --memory, and printed), explicit (packed k×k×k tensor), implicit (whitened rows on disk, one pass over them per solver iteration) or sketch (tensor sketch)")
	fs.StringVar(&f.memory, "memory", "", "memory budget of the automatic plan, e.g. 2G, also set as the Go runtime's soft memory limit (default: half the physical memory, no limit)")
	fs.IntVar(&f.sketchLen, "sketch-len", 0, "with --plan sketch: length of each count sketch (0: chosen from k)")
	fs.IntVar(&f.sketchCount, "sketch-count", 0, "with --plan sketch: number of sketches, combined by their median (0: 3)")
	fs.StringVar(&f.rowDir, "row-dir", "", "with --plan implicit: directory for the temporary row files (default: the system temporary directory)")
	fs.StringVar(&f.topicsParquet, "topics-parquet", "", "also write the topic matrix as Parquet to this file (one row per topic: topic, alpha, probs list<double>)")
	f.ck = addCheckpointFlags(fs) // checkpoint.go
	f.spill = addSpillFlags(fs)   // inputflags.go
}

// addWhiteningFlags registers the flags of the randomized whitening (lda,
// topic, gmm, ica); the topic models give --power-iters their own meaning.
func (f *fitFlags) addWhiteningFlags(fs *flag.FlagSet) {
	fs.IntVar(&f.oversample, "oversample", 0, "extra sketch columns beyond k for the randomized whitening (0: the model's default, 10)")
	if fs.Lookup("power-iters") == nil {
		fs.IntVar(&f.powerIters, "power-iters", 0, "power passes of the randomized whitening, each one more pass (0: the model's default, 2; -1: none)")
	}
	fs.IntVar(&f.exactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this dimension (0: model default, -1: never)")
}

// addSnapshotFlags registers the flags of the models of unordered snapshots
// (markov, hmm-snapshot): grouped dense rows, α₀ and the snapshot rate.
func (f *fitFlags) addSnapshotFlags(fs *flag.FlagSet) {
	addDenseFlags(fs, f.o, true)
	fs.Float64Var(&f.alpha0, "alpha0", 1, "Dirichlet concentration α₀ of the set mixture, > 0")
	fs.Float64Var(&f.r, "r", 0, "the snapshot rate r (0: find it by the projection-distance scan)")
}

// newFitFlags makes the flag set of `fit MODEL`: the flags every model reads,
// then the model's own.
func newFitFlags(m fitModel) (*flag.FlagSet, *fitFlags) {
	fs := newFlags("fit "+m.name, "", "Fits "+m.name+" from --input in a fixed number of passes and writes the model as JSON (atomically).\n"+m.name+": "+m.about+".")
	f := &fitFlags{}
	f.o = addReadFlags(fs)
	fs.StringVar(&f.input, "input", "", "input file (any format streamfit inspect reads), or a directory of text files")
	fs.StringVar(&f.out, "out", "model.json", "output model file (JSON)")
	fs.IntVar(&f.k, "k", 10, "number of topics / components / states")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (same input and seed give the same model)")
	fs.StringVar(&f.solverName, "solver", "rtpm", "tensor decomposition: "+strings.Join(solver.Names(), ", ")+" (lda/topic when not given: ojd for a pure spectral fit held explicitly, ojd0 above k=64, rtpm above k=128, simultaneous when EM passes follow or the third moment is on disk or sketched)")
	fs.IntVar(&f.restarts, "restarts", 0, "solver restarts per component (0: solver default)")
	fs.IntVar(&f.iters, "iters", 0, "solver iterations per phase (0: solver default)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole command (Go pprof format) to `FILE`, for go tool pprof")
	fs.StringVar(&f.fromStats, "from-stats", "", "fit from merged statistics of the last pass (`streamfit stats`/`merge`) instead of passes over --input; lda/topic: with --input, the EM passes over it follow (the model of fit --input)")
	fs.BoolVar(&f.noTiming, "no-timing", false, "leave the fit's wall time out of model.json, so the same input and seed give byte-identical files")
	f.prog = addProgressFlag(fs)
	m.flags(f, fs)
	return fs, f
}

// fitModelOf returns the model called name.
func fitModelOf(name string) (fitModel, bool) {
	for _, m := range fitModels {
		if m.name == name {
			return m, true
		}
	}
	return fitModel{}, false
}

// notDefined rewrites the flag package's "flag provided but not defined"
// for `fit MODEL` into a message that says which models read the flag.
func notDefined(model string, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var readers []string
	for _, m := range fitModels {
		if fs, _ := newFitFlags(m); fs.Lookup(name) != nil {
			readers = append(readers, m.name)
		}
	}
	if len(readers) == 0 {
		return err
	}
	return usagef("--%s is for %s, not %s (see streamfit fit %s -h)", name, strings.Join(readers, ", "), model, model)
}

func runFit(ctx context.Context, args []string) error {
	var m fitModel
	ok := len(args) > 0
	if ok {
		m, ok = fitModelOf(args[0])
	}
	if !ok {
		var b strings.Builder
		fmt.Fprintf(&b, "usage: streamfit fit MODEL --input FILE --k K --out model.json [flags]\nmodels:\n")
		for _, m := range fitModels {
			fmt.Fprintf(&b, "  %-13s %s\n", m.name, m.about)
		}
		fmt.Fprintf(&b, "Run `streamfit fit MODEL -h` for the flags of one.")
		return usageError{b.String()}
	}
	model := m.name
	fs, f := newFitFlags(m)
	o, ck, prog := f.o, f.ck, f.prog
	pos, err := parse(fs, args[1:])
	if err != nil {
		return notDefined(model, err)
	}
	if f.input == "" && len(pos) == 1 {
		f.input = pos[0]
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	topic := model == "lda" || model == "topic"
	if topic {
		if err := f.checkEM(fs); err != nil {
			return err
		}
	}
	if f.fromStats != "" {
		if f.input != "" && !topic {
			return usagef("--from-stats fits from the statistics alone; an --input (or INPUT) does not apply")
		}
		if (set(fs, "plan") && f.plan != string(lda.Explicit) && f.plan != string(lda.Auto)) || f.implicitOp {
			return usagef("--from-stats fits the explicit tensor the statistics hold; --plan %s and --implicit do not apply", f.plan)
		}
		if f.input == "" && set(fs, "em-passes") && f.emPasses > 0 && !f.emStart {
			return usagef("--from-stats has no documents for the EM passes; give them with --input, or give --em-passes 0")
		}
	}
	if f.emStart && (!topic || f.fromStats == "" || f.input != "" || f.emPasses <= 0) {
		return usagef("--em-start writes the start of lda/topic's EM passes from --from-stats statistics alone: no --input, and --em-passes above 0")
	}
	if f.fromStats != "" && topic {
		if kind, err := implicit.PeekModel(f.fromStats); err == nil && kind == implicit.EMModel {
			if f.input != "" {
				return usagef("--from-stats of an EM pass applies its M-step to --model; an --input does not apply")
			}
			return fitEMStep(model, f.fromStats, f.emModel, f)
		}
		if f.emModel != "" {
			return usagef("--model is for --from-stats of an EM pass's statistics (stats --phase em)")
		}
		return fitTopicFromStats(ctx, model, fs, f)
	}
	if f.emModel != "" {
		return usagef("--model is for --from-stats of an EM pass's statistics (stats --phase em)")
	}
	if f.input == "" && f.fromStats == "" {
		return usagef("--input is required")
	}
	if _, err := solver.ByName(f.solverName); err != nil {
		return usageError{err.Error()}
	}
	var third lda.Third
	var memory int64
	if model == "lda" || model == "topic" {
		if third, memory, err = f.thirdFlags(fs); err != nil {
			return err
		}
	}
	stop, err := f.startOutputs(f.input, o.VocabPath, f.fromStats)
	if err != nil {
		return err
	}
	defer stop()
	if memory > 0 {
		// The budget is also the runtime's soft limit: the collector then
		// works harder near it instead of letting the heap double past
		// the live data, so the peak follows the budget, not GC timing.
		debug.SetMemoryLimit(memory)
	}
	start, cpu0 := time.Now(), sysinfo.CPUTime()
	p, done := startProgress(*prog, "fit "+model, 0)
	defer done()
	o.Progress = p
	var write func() error
	var summary string
	switch model {
	case "lda", "topic":
		src, err := f.spill.openDocs("fit", f.input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		cfg := lda.Config{
			K: f.k, Alpha0: f.alpha0, Single: model == "topic", Seed: f.seed, Workers: o.Workers,
			Oversample: f.oversample, PowerIters: f.powerIters, ExactDim: f.exactDim, CubeSample: f.cubeSample,
			Third: third, Memory: memory, SketchLen: f.sketchLen, SketchCount: f.sketchCount, RowDir: f.rowDir,
			Solver: f.solverFlag(fs), Refine: f.alsSweeps, Restarts: f.restarts, Iters: f.iters,
			EM: f.em(),
		}
		var limit planLimit
		var plan *lda.Plan
		cfg.OnPlan = func(p *lda.Plan) {
			fmt.Fprintln(os.Stderr, p)
			limit.onPlan(p)
			plan = p
		}
		cfg.Progress = ldaProgress(p, model)
		if cfg.Checkpoint, err = ck.config(f.input, *o); err != nil { // checkpoint.go
			return err
		}
		m, err := lda.Fit(ctx, src, cfg)
		if err != nil {
			return inputNamed(f.input, err)
		}
		write = func() error { return writeTopicModel(m, f) }
		summary = topicSummary(m)
		if plan != nil {
			fmt.Fprintln(os.Stderr, planVersusMeasured(model, plan, m, cpu0))
		}
	default:
		var err error
		if write, summary, err = fitDense(ctx, model, f, o); err != nil {
			return err
		}
	}
	if err := write(); err != nil {
		return err
	}
	done()
	fmt.Fprintf(os.Stderr, "fit %s: %s in %.1fs → %s\n", model, summary, time.Since(start).Seconds(), f.out)
	return nil
}

// inputNamed names the input in an error that cannot (a pass without one
// usable document).
func inputNamed(input string, err error) error {
	if errors.Is(err, implicit.ErrNoDocs) {
		return fmt.Errorf("%s: %w", input, err)
	}
	return err
}

// em is the EM configuration of the flags.
func (f *fitFlags) em() lda.EM {
	e := lda.EM{Passes: f.emPasses, Tol: f.emTol, FitAlpha: f.emAlpha, Sample: f.emSample, FullPasses: f.emFullPasses}
	if f.emFullPasses == 0 {
		e.FullPasses = -1
	}
	if f.emMode == "online" {
		e.Online, e.MiniBatch, e.Kappa, e.Tau0 = true, f.emMiniBatch, f.emKappa, f.emTau0
	}
	return e
}

// checkEM refuses, as usage errors, an unknown --em and online settings
// outside their ranges, and online-only flags with batch EM.
func (f *fitFlags) checkEM(fs *flag.FlagSet) error {
	if f.cubeSample < 0 {
		return usagef("--cube-sample %d: want a number of tokens ≥ 0 (0: every document)", f.cubeSample)
	}
	if f.emSample < -1 {
		return usagef("--em-sample %d: want a number of tokens, 0 for the default or -1 for none", f.emSample)
	}
	if f.emFullPasses < 0 {
		return usagef("--em-full-passes %d: want a number of passes ≥ 0", f.emFullPasses)
	}
	switch f.emMode {
	case "batch":
		for _, name := range []string{"em-minibatch", "em-kappa", "em-tau0"} {
			if set(fs, name) {
				return usagef("--%s is a setting of --em online", name)
			}
		}
		return nil
	case "online":
	default:
		return usagef("--em %q: want batch or online", f.emMode)
	}
	if !(f.emKappa > 0.5 && f.emKappa <= 1) {
		return usagef("--em-kappa %g: want a value in (0.5, 1]", f.emKappa)
	}
	if !(f.emTau0 > 0) || math.IsInf(f.emTau0, 0) {
		return usagef("--em-tau0 %g: want a finite value > 0", f.emTau0)
	}
	return nil
}

// ldaProgress returns the progress hook of an LDA fit that shows on p (nil:
// none): the stage on the progress line, and one line per EM pass that
// stays on the screen.
func ldaProgress(p *stream.Progress, model string) func(lda.Progress) {
	if p == nil {
		return nil
	}
	return func(pr lda.Progress) {
		p.SetStage(ldaStage(pr))
		if (pr.Stage == "em" || pr.Stage == "em-sample") && pr.Done {
			clear := ""
			if stderrIsTerminal() {
				clear = "\r\033[K"
			}
			fmt.Fprintf(os.Stderr, "%sfit %s: %s (%.1fs)\n", clear, model, ldaStage(pr), pr.Elapsed.Seconds())
		}
	}
}

// topicSummary is the summary line of an LDA or single-topic fit.
func topicSummary(m *models.Model) string {
	s := fmt.Sprintf("%d topics over %d words from %d documents (%d skipped), %d passes", m.K, m.D, m.Fit.Docs, m.Fit.Skipped, m.Fit.Passes)
	if em := m.Fit.EM; em != nil {
		s += fmt.Sprintf(" (%d of them EM, training bound %.5f per token)", em.Passes, em.Bounds[len(em.Bounds)-1])
	}
	return s
}

// cubeSampleHelp is the help of --cube-sample (fit and stats).
const cubeSampleHelp = "explicit third moment of a corpus of more tokens: its cubes (K³/6 products a document) are summed over a seeded sample of the documents of about this many tokens, each weighted by the inverse of the sample's share; every other sum reads every document (0: every document)"

// planVersusMeasured is the line fit prints after an LDA fit: the CPU the
// process used since cpu0 (the command's start) beside the plan's forecast, and the plan's cost model for
// the passes the fit took (the forecast assumes a typical number of EM
// passes; the stopping rule decides).
func planVersusMeasured(model string, plan *lda.Plan, m *models.Model, cpu0 time.Duration) string {
	used := (sysinfo.CPUTime() - cpu0).Seconds()
	forecast, taken := plan.Predicted.CPUSeconds, plan.Taken(m)
	if forecast < 0 {
		return fmt.Sprintf("fit %s: CPU %.1fs (the plan could not forecast it: the number of documents was unknown)", model, used)
	}
	return fmt.Sprintf("fit %s: CPU %.1fs; the plan forecast %.1fs, and %.1fs for the passes taken (%.2f× the CPU used)", model, used, forecast, taken, taken/used)
}

// defaultEMPasses caps the EM passes of `fit lda|topic`: the stopping rule
// (--em-tol) usually ends them earlier.
const defaultEMPasses = 10

// ldaStage names an LDA fit's stage for the progress line.
func ldaStage(pr lda.Progress) string {
	switch {
	case (pr.Stage == "em" || pr.Stage == "em-sample") && pr.Done:
		return fmt.Sprintf("pass %d (%s): bound %.5f per token", pr.Pass, pr.Stage, pr.Bound)
	case pr.Stage != "solve":
		return fmt.Sprintf("pass %d (%s)", pr.Pass, pr.Stage)
	case pr.Rows > 0:
		return fmt.Sprintf("solve: contraction %d, %d of %d rows", pr.Contraction, pr.Docs, pr.Rows)
	}
	return fmt.Sprintf("solve: contraction %d", pr.Contraction)
}

// fitFlags holds the flags of `fit`: those of every model, and each model's
// own (pointing at zero values for the flags its model does not read).
type fitFlags struct {
	o             *stream.Options
	ck            checkpointFlags
	spill         *spillFlags
	prog          *progressMode
	input         string
	out           string
	k             int
	seed          uint64
	alpha0        float64
	solverName    string
	alsSweeps     int
	emPasses      int
	emTol         float64
	emSample      int64
	cubeSample    int64
	emFullPasses  int
	emAlpha       bool
	emMode        string // --em: batch or online
	emMiniBatch   int
	emKappa       float64
	emTau0        float64
	restarts      int
	iters         int
	oversample    int
	powerIters    int
	exactDim      int
	implicitOp    bool
	plan          string
	memory        string
	sketchLen     int
	sketchCount   int
	rowDir        string
	differing     bool
	sigma2        float64
	windows       bool
	discrete      bool
	views         string
	randomViews   bool
	r             float64
	fromStats     string
	emModel       string // --model: the model an EM pass's statistics were computed from
	emStart       bool   // --em-start: the EM passes' start from the statistics
	noTiming      bool
	topicsParquet string
	cpuProfile    string
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

// writeTopicModel prints the fit's warnings on stderr and writes the model
// (and the topic matrix as Parquet when asked), each file atomically; when the
// second write fails, the first file is removed, so a failed command leaves
// neither.
func writeTopicModel(m *models.Model, f *fitFlags) error {
	for _, w := range m.Fit.Warnings {
		warn("fit", w)
	}
	if f.noTiming {
		m.Fit.Seconds = 0
	}
	if f.topicsParquet != "" {
		if err := models.WriteTopicsParquet(m, f.topicsParquet); err != nil {
			return err
		}
	}
	if err := m.Write(f.out); err != nil {
		if f.topicsParquet != "" {
			os.Remove(f.topicsParquet)
		}
		return err
	}
	return nil
}

// thirdFlags reads --plan, --implicit and --memory: the representation of
// the third moment lda/topic fits use (Auto: the plan's choice) and the
// memory budget (0: the default).
func (f *fitFlags) thirdFlags(fs *flag.FlagSet) (lda.Third, int64, error) {
	third := lda.Third(f.plan)
	switch third {
	case lda.Auto, lda.Explicit, lda.Rows, lda.Sketch:
	default:
		return "", 0, usagef("--plan=%s: want auto, explicit, implicit or sketch", f.plan)
	}
	if f.implicitOp {
		if set(fs, "plan") && third != lda.Rows {
			return "", 0, usagef("--implicit is --plan implicit; it contradicts --plan %s", third)
		}
		third = lda.Rows
	}
	if f.sketchLen < 0 || f.sketchLen == 1 || f.sketchCount < 0 {
		return "", 0, usagef("--sketch-len=%d and --sketch-count=%d: want a length of at least 2 and a positive count (0: default)", f.sketchLen, f.sketchCount)
	}
	var memory int64
	if f.memory != "" {
		var err error
		if memory, err = lda.ParseBytes(f.memory); err != nil {
			return "", 0, usagef("--memory: %v", err)
		}
	}
	return third, memory, nil
}

// solverFlag is --solver when given, else "" (the model picks the solver
// that suits its representation of the third moment).
func (f *fitFlags) solverFlag(fs *flag.FlagSet) string {
	if set(fs, "solver") {
		return f.solverName
	}
	return ""
}

// set reports whether the flag name was given on the command line.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// startOutputs checks that the outputs overwrite none of the inputs and
// starts the CPU profile when --cpuprofile asks; the caller defers stop.
func (f *fitFlags) startOutputs(inputs ...string) (stop func(), err error) {
	if err := checkOutputs(inputs, f.out, f.topicsParquet, f.cpuProfile); err != nil {
		return nil, err
	}
	if f.cpuProfile == "" {
		return func() {}, nil
	}
	return startCPUProfile(f.cpuProfile)
}

// fitTopicFromStats runs `fit lda|topic --from-stats S [--input F]`: the
// spectral fit from the merged statistics S and, with --input, the EM
// passes over F, which give the model of `fit --input F` with the same
// flags. Without --input the EM passes cannot run: the spectral fit is
// written, with a note on stderr when --em-passes asks for them.
func fitTopicFromStats(ctx context.Context, model string, fs *flag.FlagSet, f *fitFlags) error {
	o := f.o
	stop, err := f.startOutputs(f.fromStats, f.input, o.VocabPath)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	// k, α₀ and seed come from the statistics unless given explicitly.
	cfg := lda.Config{Single: model == "topic", Workers: o.Workers, Solver: f.solverFlag(fs), Refine: f.alsSweeps,
		Restarts: f.restarts, Iters: f.iters, EM: f.em()}
	if f.plan == string(lda.Auto) {
		cfg.Third = lda.Auto // recorded as fit's plan records its choice
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "k":
			cfg.K = f.k
		case "alpha0":
			cfg.Alpha0 = f.alpha0
		case "seed":
			cfg.Seed = f.seed
		}
	})
	if f.input == "" {
		// No EM passes follow, so the start is solved as a pure spectral
		// fit (the model of fit --em-passes 0), unless --em-start asks for
		// the start EM passes run elsewhere refine.
		spectral := cfg
		if !f.emStart {
			spectral.EM = lda.EM{}
		}
		m, err := fitFromStats(ctx, f.fromStats, spectral)
		if err != nil {
			return err
		}
		if f.emPasses > 0 && !f.emStart {
			fmt.Fprintf(os.Stderr, "fit %s: the spectral fit of %s; the EM passes need the documents: give them with --input to run them (--em-passes 0 silences this)\n", model, f.fromStats)
		}
		return writeTopicModel(m, f)
	}
	p, done := startProgress(*f.prog, "fit "+model, 0)
	defer done()
	o.Progress = p
	src, err := f.spill.openDocs("fit", f.input, *o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	m, err := fitFromStats(ctx, f.fromStats, cfg)
	if err != nil {
		return err
	}
	cfg.Progress = ldaProgress(p, model)
	if cfg.Checkpoint, err = f.ck.config(f.input, *o); err != nil { // checkpoint.go
		return err
	}
	if err := lda.RefineEM(ctx, src, m, cfg); err != nil {
		return inputNamed(f.input, err)
	}
	if err := writeTopicModel(m, f); err != nil {
		return err
	}
	done()
	fmt.Fprintf(os.Stderr, "fit %s: %s in %.1fs → %s\n", model, topicSummary(m), time.Since(start).Seconds(), f.out)
	return nil
}
