package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("fit", "fit a model by the method of moments: fit lda|topic|gmm|markov|hmm-snapshot|ica|hmm|multiview", runFit)
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
	f := &fitFlags{}
	ck := addCheckpointFlags(fs) // checkpoint.go
	f.input = fs.String("input", "", "input file (any format of `streamfit inspect`), or a directory of text files")
	f.out = fs.String("out", "model.json", "output model file (JSON)")
	f.k = fs.Int("k", 10, "number of topics / components / states")
	f.seed = fs.Uint64("seed", 1, "random seed (same input and seed give the same model)")
	f.alpha0 = fs.Float64("alpha0", 1, "Dirichlet concentration α₀, a finite number > 0: lda (topic mixture), markov/hmm-snapshot (set mixture)")
	f.solverName = fs.String("solver", "rtpm", "tensor decomposition (every model): "+strings.Join(solver.Names(), ", "))
	f.alsSweeps = fs.Int("als-sweeps", 0, "lda/topic: CP-ALS sweeps on the whitened tensor after the solver (not the likelihood refinement: see --em-passes)")
	f.emPasses = fs.Int("em-passes", defaultEMPasses, "lda/topic: cap on the variational EM passes over --input that refine the spectral fit by likelihood (0: the pure spectral fit)")
	f.emTol = fs.Float64("em-tol", lda.DefaultEMTol, "lda/topic: stop the EM passes when the training bound improved by less than this, relatively, in a pass")
	f.emAlpha = fs.Bool("em-alpha", true, "lda: re-estimate α in every EM pass (Minka's fixed point); false keeps the spectral α̂")
	f.restarts = fs.Int("restarts", 0, "solver restarts per component (0: solver default)")
	f.iters = fs.Int("iters", 0, "solver iterations per phase (0: solver default)")
	f.oversample = fs.Int("oversample", 0, "lda/topic/gmm/ica: extra sketch columns beyond k for the randomized whitening (0: the model's default, 10)")
	f.powerIters = fs.Int("power-iters", 0, "lda/topic/gmm/ica: power passes of the randomized whitening, each one more pass (lda/topic: 0 adds one when the first sketch does not decay, -1 never does)")
	f.exactDim = fs.Int("exact-dim", 0, "whiten exactly (dense d×d) up to this dimension (0: model default, -1: never)")
	f.implicitOp = fs.Bool("implicit", false, "lda/topic: the same as --plan implicit")
	f.plan = fs.String("plan", "auto", "lda/topic: how to hold the third moment: auto (chosen from k, the vocabulary, the documents and --memory, and printed), explicit (packed k×k×k tensor), implicit (whitened rows on disk, one pass over them per solver iteration) or sketch (tensor sketch)")
	f.memory = fs.String("memory", "", "lda/topic: memory budget of the automatic plan, e.g. 2G, also set as the Go runtime's soft memory limit (default: half the physical memory, no limit)")
	f.sketchLen = fs.Int("sketch-len", 0, "lda/topic with --plan sketch: length of each count sketch (0: chosen from k)")
	f.sketchCount = fs.Int("sketch-count", 0, "lda/topic with --plan sketch: number of sketches, combined by their median (0: 3)")
	f.rowDir = fs.String("row-dir", "", "lda/topic with --plan implicit: directory for the temporary row files (default: the system temporary directory)")
	f.differing = fs.Bool("differing", false, "gmm: a variance per component")
	f.sigma2 = fs.Float64("sigma2", 0, "gmm: known common variance; hmm-snapshot: observation noise variance (0: estimate it; negative is an error)")
	f.windows = fs.Bool("windows", false, "hmm: use every window of three steps, not only the first three of each sequence")
	f.discrete = fs.Bool("discrete", false, "hmm: observations are one-hot symbols (project O's columns onto the simplex)")
	f.views = fs.String("views", "", `multiview: column groups of the three views, e.g. "0,1,2;3,4;5,6" (default: an equal split), or "rotate": a seeded random rotation of the rows, then the equal split (004 Prop 3.3)`)
	f.randomViews = fs.Bool("random-views", false, "multiview: a seeded random split of the columns into three views (mixtures of product distributions)")
	f.r = fs.Float64("r", 0, "markov/hmm-snapshot: the snapshot rate r (0: find it by the projection-distance scan)")
	f.fromStats = fs.String("from-stats", "", "fit from merged statistics of the last pass (`streamfit stats`/`merge`) instead of reading --input")
	f.noTiming = fs.Bool("no-timing", false, "leave the fit's wall time out of model.json, so the same input and seed give byte-identical files")
	f.topicsParquet = fs.String("topics-parquet", "", "lda/topic: also write the topic matrix as Parquet to this file (one row per topic: topic, alpha, probs list<double>)")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the whole command (Go pprof format) to this file, for `go tool pprof`")
	prog := addProgressFlag(fs)
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if *f.cpuProfile != "" {
		stop, err := startCPUProfile(*f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *f.fromStats != "" && (model == "lda" || model == "topic") {
		if set(fs, "em-passes") && *f.emPasses > 0 {
			return usagef("--from-stats has no documents for the EM passes; fit from --input to refine, or give --em-passes 0")
		}
		if (set(fs, "plan") && *f.plan != string(lda.Explicit) && *f.plan != string(lda.Auto)) || *f.implicitOp {
			return usagef("--from-stats fits the explicit tensor the statistics hold; --plan %s and --implicit do not apply", *f.plan)
		}
		// k, α₀ and seed come from the statistics unless given explicitly.
		cfg := lda.Config{Single: model == "topic", Workers: o.Workers, Solver: f.solverFlag(fs), Refine: *f.alsSweeps,
			Restarts: *f.restarts, Iters: *f.iters}
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "k":
				cfg.K = *f.k
			case "alpha0":
				cfg.Alpha0 = *f.alpha0
			case "seed":
				cfg.Seed = *f.seed
			}
		})
		m, err := fitFromStats(ctx, *f.fromStats, cfg)
		if err != nil {
			return err
		}
		return writeTopicModel(m, f)
	}
	if *f.input == "" && len(pos) == 1 {
		*f.input = pos[0]
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *f.input == "" && *f.fromStats == "" {
		return usagef("--input is required")
	}
	if *f.k < 1 {
		return usagef("--k=%d: need at least one component", *f.k)
	}
	if *f.emPasses < 0 || !(*f.emTol > 0) {
		return usagef("--em-passes=%d and --em-tol=%g: want a cap of at least 0 and a positive tolerance", *f.emPasses, *f.emTol)
	}
	if model == "lda" && (!(*f.alpha0 > 0) || math.IsInf(*f.alpha0, 1)) {
		return usagef("--alpha0=%g: the Dirichlet concentration must be a finite number > 0 (1 is the usual choice)", *f.alpha0)
	}
	if model != "lda" && model != "topic" {
		for _, name := range topicOnlyFlags {
			if set(fs, name) {
				return usagef("--%s is for lda and topic, not %s", name, model)
			}
		}
	}
	if _, err := solver.ByName(*f.solverName); err != nil {
		return usageError{err.Error()}
	}
	third, memory, err := f.thirdFlags(fs)
	if err != nil {
		return err
	}
	if memory > 0 {
		// The budget is also the runtime's soft limit: the collector then
		// works harder near it instead of letting the heap double past
		// the live data, so the peak follows the budget, not GC timing.
		debug.SetMemoryLimit(memory)
	}
	start := time.Now()
	p, done := startProgress(*prog, "fit "+model, 0)
	defer done()
	o.Progress = p
	var write func() error
	var summary string
	switch model {
	case "lda", "topic":
		src, err := stream.Open(*f.input, *o)
		if err != nil {
			return err
		}
		defer stream.Close(src)
		cfg := lda.Config{
			K: *f.k, Alpha0: *f.alpha0, Single: model == "topic", Seed: *f.seed, Workers: o.Workers,
			Oversample: *f.oversample, PowerIters: *f.powerIters, ExactDim: *f.exactDim,
			Third: third, Memory: memory, SketchLen: *f.sketchLen, SketchCount: *f.sketchCount, RowDir: *f.rowDir,
			Solver: f.solverFlag(fs), Refine: *f.alsSweeps, Restarts: *f.restarts, Iters: *f.iters,
			EM: lda.EM{Passes: *f.emPasses, Tol: *f.emTol, FitAlpha: *f.emAlpha},
		}
		cfg.OnPlan = func(p *lda.Plan) { fmt.Fprintln(os.Stderr, p) }
		if p != nil {
			cfg.Progress = func(pr lda.Progress) {
				p.SetStage(ldaStage(pr))
				if pr.Stage == "em" && pr.Done { // one line per EM pass stays on the screen
					clear := ""
					if stderrIsTerminal() {
						clear = "\r\033[K"
					}
					fmt.Fprintf(os.Stderr, "%sfit %s: %s (%.1fs)\n", clear, model, ldaStage(pr), pr.Elapsed.Seconds())
				}
			}
		}
		if cfg.Checkpoint, err = ck.config(*f.input, *o); err != nil { // checkpoint.go
			return err
		}
		m, err := lda.Fit(ctx, src, cfg)
		if err != nil {
			return err
		}
		write = func() error { return writeTopicModel(m, f) }
		summary = fmt.Sprintf("%d topics over %d words from %d documents (%d skipped), %d passes", m.K, m.D, m.Fit.Docs, m.Fit.Skipped, m.Fit.Passes)
		if em := m.Fit.EM; em != nil {
			summary += fmt.Sprintf(" (%d of them EM, training bound %.5f per token)", em.Passes, em.Bounds[len(em.Bounds)-1])
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
	fmt.Fprintf(os.Stderr, "fit %s: %s in %.1fs → %s\n", model, summary, time.Since(start).Seconds(), *f.out)
	return nil
}

// topicOnlyFlags are the flags of `fit` that only the topic models read: given
// to another model they would be ignored silently (a --checkpoint that
// never resumes), so they are refused.
var topicOnlyFlags = []string{"plan", "implicit", "sketch-len", "sketch-count", "row-dir", "checkpoint", "checkpoint-every",
	"topics-parquet", "als-sweeps", "em-passes", "em-tol", "em-alpha"}

// defaultEMPasses caps the EM passes of `fit lda|topic`: the stopping rule
// (--em-tol) usually ends them earlier.
const defaultEMPasses = 10

// ldaStage names an LDA fit's stage for the progress line.
func ldaStage(pr lda.Progress) string {
	switch {
	case pr.Stage == "em" && pr.Done:
		return fmt.Sprintf("pass %d (em): bound %.5f per token", pr.Pass, pr.Bound)
	case pr.Stage != "solve":
		return fmt.Sprintf("pass %d (%s)", pr.Pass, pr.Stage)
	case pr.Rows > 0:
		return fmt.Sprintf("solve: contraction %d, %d of %d rows", pr.Contraction, pr.Docs, pr.Rows)
	}
	return fmt.Sprintf("solve: contraction %d", pr.Contraction)
}

// fitFlags holds the flags of `fit`, shared by every model.
type fitFlags struct {
	input         *string
	out           *string
	k             *int
	seed          *uint64
	alpha0        *float64
	solverName    *string
	alsSweeps     *int
	emPasses      *int
	emTol         *float64
	emAlpha       *bool
	restarts      *int
	iters         *int
	oversample    *int
	powerIters    *int
	exactDim      *int
	implicitOp    *bool
	plan          *string
	memory        *string
	sketchLen     *int
	sketchCount   *int
	rowDir        *string
	differing     *bool
	sigma2        *float64
	windows       *bool
	discrete      *bool
	views         *string
	randomViews   *bool
	r             *float64
	fromStats     *string
	noTiming      *bool
	topicsParquet *string
	cpuProfile    *string
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
		fmt.Fprintf(os.Stderr, "streamfit fit: warning: %s\n", w)
	}
	if *f.noTiming {
		m.Fit.Seconds = 0
	}
	if *f.topicsParquet != "" {
		if err := models.WriteTopicsParquet(m, *f.topicsParquet); err != nil {
			return err
		}
	}
	if err := m.Write(*f.out); err != nil {
		if *f.topicsParquet != "" {
			os.Remove(*f.topicsParquet)
		}
		return err
	}
	return nil
}

// thirdFlags reads --plan, --implicit and --memory: the representation of
// the third moment lda/topic fits use (Auto: the plan's choice) and the
// memory budget (0: the default).
func (f *fitFlags) thirdFlags(fs *flag.FlagSet) (lda.Third, int64, error) {
	third := lda.Third(*f.plan)
	switch third {
	case lda.Auto, lda.Explicit, lda.Rows, lda.Sketch:
	default:
		return "", 0, usagef("--plan=%s: want auto, explicit, implicit or sketch", *f.plan)
	}
	if *f.implicitOp {
		if set(fs, "plan") && third != lda.Rows {
			return "", 0, usagef("--implicit is --plan implicit; it contradicts --plan %s", third)
		}
		third = lda.Rows
	}
	if *f.sketchLen < 0 || *f.sketchLen == 1 || *f.sketchCount < 0 {
		return "", 0, usagef("--sketch-len=%d and --sketch-count=%d: want a length of at least 2 and a positive count (0: default)", *f.sketchLen, *f.sketchCount)
	}
	var memory int64
	if *f.memory != "" {
		var err error
		if memory, err = lda.ParseBytes(*f.memory); err != nil {
			return "", 0, usagef("--memory: %v", err)
		}
	}
	return third, memory, nil
}

// solverFlag is --solver when given, else "" (the model picks the solver
// that suits its representation of the third moment).
func (f *fitFlags) solverFlag(fs *flag.FlagSet) string {
	if set(fs, "solver") {
		return *f.solverName
	}
	return ""
}

// set reports whether the flag name was given on the command line.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}
