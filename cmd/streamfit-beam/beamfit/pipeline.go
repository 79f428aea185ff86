package beamfit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/streamfit/streamfit/stream"
)

// Options describe a pipeline: its work units, how they are read, the fit
// and what it writes.
type Options struct {
	// Units are the work units (Plan).
	Units []Unit
	// Read is how the units are read (formats, columns, batch rows, decoding
	// goroutines per unit). Its Progress must be nil.
	Read stream.Options
	// Fit are the fit's settings.
	Fit Settings
	// StatsOnly, when 1 or 2, ends the pipeline after that phase (with the
	// power passes before phase 2) and writes its merged statistics to
	// Out.Stats, with no model: the file `streamfit stats --append` adds new
	// inputs to, and phase-2 statistics `streamfit fit --from-stats` fits.
	StatsOnly int
	// Out says what the pipeline writes.
	Out Output
}

// ErrUsage reports options that describe no valid pipeline.
var ErrUsage = errors.New("invalid pipeline options")

// check validates the options.
func (o Options) check() error {
	f := o.Fit
	switch {
	case len(o.Units) == 0:
		return ErrNoInput
	case f.dense() && f.denseErr() != nil:
		return fmt.Errorf("%w: %w (Settings.Model names a model of dense rows, Settings.Dense its settings: see Bind; neither for lda and topic)", ErrUsage, f.denseErr())
	case f.K < 1:
		return fmt.Errorf("%w: k=%d: need at least one component", ErrUsage, f.K)
	case f.dense() && f.Single:
		return fmt.Errorf("%w: %s: single is a setting of the topic models", ErrUsage, f.Model)
	case !f.dense() && !f.Single && (!(f.Alpha0 > 0) || math.IsInf(f.Alpha0, 1)):
		return fmt.Errorf("%w: alpha0=%g: the Dirichlet concentration must be a finite number > 0", ErrUsage, f.Alpha0)
	case o.Fit.EMPasses < 0 || (o.Fit.EMPasses > 0 && (f.dense() || !(f.EMTol > 0))):
		return fmt.Errorf("%w: em-passes=%d, em-tol=%g: Settings.EMPasses are lda's and topic's, with a tolerance > 0 (a dense model's are its settings, Settings.Dense)", ErrUsage, f.EMPasses, f.EMTol)
	case o.StatsOnly < 0 || o.StatsOnly > 2:
		return fmt.Errorf("%w: stats-only=%d: want 1 or 2 (or 0 to fit)", ErrUsage, o.StatsOnly)
	case o.StatsOnly > 0 && o.Out.Stats == "":
		return fmt.Errorf("%w: statistics only, but no statistics file to write", ErrUsage)
	case o.StatsOnly > 0 && o.Out.Model != "":
		return fmt.Errorf("%w: statistics only, but a model file to write", ErrUsage)
	case o.StatsOnly == 0 && o.Out.Model == "":
		return fmt.Errorf("%w: no model file to write", ErrUsage)
	case o.Read.Progress != nil:
		return fmt.Errorf("%w: progress is not reported from workers", ErrUsage)
	case f.sweep() && f.sweepErr() != nil:
		return fmt.Errorf("%w: %w", ErrUsage, f.sweepErr())
	case !f.sweep() && (o.Out.HeldOut != "" || o.Out.Scores != ""):
		return fmt.Errorf("%w: held-out documents and a scores file are for a sweep over k (Settings.Ks)", ErrUsage)
	case (o.Out.HeldOut == "") != (o.Out.Scores == ""):
		return fmt.Errorf("%w: a sweep is scored on held-out documents into a scores file: give both or neither", ErrUsage)
	case o.StatsOnly > 0 && o.Out.HeldOut != "":
		return fmt.Errorf("%w: statistics only, but held-out documents to score models on", ErrUsage)
	}
	return nil
}

// New builds the pipeline of the options: phase 1 over every work unit,
// merged; the power passes of the randomized whitening, each merged; phase
// 2 against the whitening W, merged; the fit; with Settings.EMPasses, the
// EM passes that refine it (emPasses). A dense model (Settings.Model)
// takes the passes of its plan instead, each with the merged pass before
// as its side input, as many as the settings can need (denseStages), then
// the likelihood passes of its fit when it has them (GMM's EM, the HMM's
// Baum–Welch: emPasses too). The statistics of each phase
// are combined by mergeFn (the library's exact merge), and each phase
// after the first takes the merged statistics of the one before as a side
// input (through a template that computes the pass's projection once), so
// the model is that of `streamfit stats` + `merge` + `fit --from-stats`
// over the same files, byte for byte, whatever the runner's parallelism.
func New(o Options) (*beam.Pipeline, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	units := beam.Reshuffle(s.Scope("units"), beam.CreateList(s.Scope("units"), o.Units))
	o.Out.Fit = o.Fit

	merged := beam.Combine(s.Scope("phase 1"), &mergeFn{},
		beam.ParDo(s.Scope("phase 1"), &phase1Fn{Read: o.Read, Fit: o.Fit}, units))
	if o.StatsOnly == 1 {
		beam.ParDo0(s.Scope("write"), &writeFn{Out: o.Out}, merged)
		return p, nil
	}
	if o.Fit.dense() {
		// Each pass of a dense model takes the merged pass before as its
		// side input, and each unit computes its basis from it (a small
		// eigenproblem); the stages after the last pass the plan takes
		// read nothing, and the statistics before them are kept
		// (denseStages).
		for i := 2; i <= o.Fit.denseStages(); i++ {
			ps := s.Scope(fmt.Sprintf("pass %d", i))
			merged = beam.ParDo(ps, &chooseFn{}, merged, beam.SideInput{Input: pass(ps, units, merged, passPhase2, o)})
		}
		if o.StatsOnly == 0 && o.Fit.emCap() > 0 {
			model := emPasses(s, units, merged, o)
			beam.ParDo0(s.Scope("write"), &writeModelFn{Out: o.Out}, model, beam.SideInput{Input: merged})
			return p, nil
		}
		beam.ParDo0(s.Scope("write"), &writeFn{Out: o.Out}, merged)
		return p, nil
	}
	for i := range o.Fit.powerStages() {
		ps := s.Scope(fmt.Sprintf("power pass %d", i+1))
		power := pass(ps, units, merged, passPower, o)
		merged = beam.ParDo(ps, &chooseFn{}, merged, beam.SideInput{Input: power})
	}
	merged = pass(s.Scope("phase 2"), units, merged, passPhase2, o)
	if o.StatsOnly == 0 && (o.Fit.EMPasses > 0 || o.Fit.sweep()) {
		model := emPasses(s, units, merged, o)
		w := &writeModelFn{Out: o.Out, Read: o.Read}
		if o.Out.HeldOut != "" {
			w.Units = o.Units // the coherence of the sweep's topics
		}
		beam.ParDo0(s.Scope("write"), w, model, beam.SideInput{Input: merged})
		return p, nil
	}
	beam.ParDo0(s.Scope("write"), &writeFn{Out: o.Out}, merged)
	return p, nil
}

// pass adds the pass named pass (a power pass or phase 2) after the merged
// statistics before: its template, the statistics of every unit against it,
// and their merge.
func pass(s beam.Scope, units, before beam.PCollection, pass string, o Options) beam.PCollection {
	template := beam.ParDo(s, &templateFn{Pass: pass, Fit: o.Fit}, before)
	stats := beam.ParDo(s, &basedFn{Pass: pass, Read: o.Read, Fit: o.Fit}, units, beam.SideInput{Input: template})
	return beam.Combine(s, &mergeFn{}, stats)
}

// Run plans the files (Plan, or PlanDense for a dense model), builds the
// pipeline (New) and runs it with
// the runner named (beam.Run; the runner must be registered, e.g. by
// importing its package).
func Run(ctx context.Context, runner string, files []string, o Options) error {
	planner := Plan
	if o.Fit.dense() {
		planner = PlanDense
	}
	units, err := planner(ctx, files, o.Read)
	if err != nil {
		return err
	}
	o.Units = units
	p, err := New(o)
	if err != nil {
		return err
	}
	start := time.Now()
	_, err = beam.Run(ctx, runner, p)
	removeLoopbackFiles(start)
	return err
}

// removeLoopbackFiles removes the empty files beamloopbackworker-* that the
// Beam Go SDK (v2.77.0) creates in the temporary directory for each job run
// with loopback workers (prism's default) and leaves behind; only empty
// ones from since on, which the SDK never uses.
func removeLoopbackFiles(since time.Time) {
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), "beamloopbackworker-*"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && !fi.ModTime().Before(since.Add(-time.Second)) {
			os.Remove(f)
		}
	}
}
