package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// topicFlags are the flags of `fit lda|topic` beyond the model's settings:
// checkpoints, the spill of the documents, the extra output, and the
// statistics route of the EM passes.
type topicFlags struct {
	ck            checkpointFlags
	spill         *spillFlags
	topicsParquet string
	emModel       string // --model: the model an EM pass's statistics were computed from
	emStart       bool   // --em-start: the EM passes' start from the statistics
}

// addTopicFlags registers the flags of topicFlags.
func addTopicFlags(fs *flag.FlagSet) *topicFlags {
	t := &topicFlags{}
	fs.BoolVar(&t.emStart, "em-start", false, "lda/topic, with --from-stats of the last spectral phase and no --input: write the start the default fit's EM passes refine (its spectral fit solved as when EM passes follow), for EM passes run shard by shard (stats --phase em --model)")
	fs.StringVar(&t.emModel, "model", "", "with --from-stats of an EM pass's merged statistics (stats --phase em): the model the pass started from; the M-step gives the next model")
	fs.StringVar(&t.topicsParquet, "topics-parquet", "", "also write the topic matrix as Parquet to this file (one row per topic: topic, alpha, probs list<double>)")
	t.ck = addCheckpointFlags(fs) // checkpoint.go
	t.spill = addSpillFlags(fs)   // inputflags.go
	return t
}

// config is the lda.Config of the flags: the model's settings with those
// every fit reads. The solver is the model's choice unless --solver is
// given.
func (f *fitFlags) config(s *lda.Settings) lda.Config {
	cfg := s.Config
	c := f.common
	if !f.given("solver") {
		c.Solver = ""
	}
	cfg.K, cfg.Seed, cfg.Workers, cfg.Solver, cfg.Restarts, cfg.Iters = c.K, c.Seed, c.Workers, c.Solver, c.Restarts, c.Iters
	return cfg
}

// checkTopic refuses the combinations of --from-stats, --input,
// --em-passes, --em-start and --model that ask for no fit.
func (f *fitFlags) checkTopic(s *lda.Settings) error {
	t, em := f.topic, s.Config.EM.Passes
	if f.fromStats != "" && f.input == "" && f.given("em-passes") && em > 0 && !t.emStart {
		return usagef("--from-stats has no documents for the EM passes; give them with --input, or give --em-passes 0")
	}
	if t.emStart && (f.fromStats == "" || f.input != "" || em <= 0) {
		return usagef("--em-start writes the start of lda/topic's EM passes from --from-stats statistics alone: no --input, and --em-passes above 0")
	}
	return nil
}

// fitTopic runs `fit lda|topic`: from --input, from --from-stats (with the
// EM passes over --input, when given), or the M-step of an EM pass's
// merged statistics (--from-stats with --model).
func (e *env) fitTopic(ctx context.Context, f *fitFlags, s *lda.Settings) error {
	if err := f.checkTopic(s); err != nil {
		return err
	}
	if len(f.ks.ks) > 1 {
		return e.fitSweep(ctx, f, s)
	}
	if f.fromStats != "" {
		if kind, err := statsfile.PeekModel(f.fromStats); err == nil && kind == implicit.EMModel {
			if f.input != "" {
				return usagef("--from-stats of an EM pass applies its M-step to --model; an --input does not apply")
			}
			return e.fitEMStep(f, s)
		}
	}
	if f.topic.emModel != "" {
		return usagef("--model is for --from-stats of an EM pass's statistics (stats --phase em)")
	}
	if f.fromStats != "" {
		return e.fitTopicFromStats(ctx, f, s)
	}
	if err := f.checkInput(); err != nil {
		return err
	}
	stop, err := f.startOutputs(f.input, f.o.VocabPath)
	if err != nil {
		return err
	}
	defer stop()
	if m := s.Config.Memory; m > 0 {
		// The budget is also the runtime's soft limit: the collector then
		// works harder near it instead of letting the heap double past
		// the live data, so the peak follows the budget, not GC timing.
		debug.SetMemoryLimit(m)
	}
	return e.fitTopicInput(ctx, f, s)
}

// fitTopicInput fits a topic model from the documents of --input, and
// prints the CPU it took beside its plan's forecast.
func (e *env) fitTopicInput(ctx context.Context, f *fitFlags, s *lda.Settings) error {
	cpu0 := sysinfo.CPUTime()
	cfg := f.config(s)
	var limit planLimit
	var plan *lda.Plan
	cfg.OnPlan = func(p *lda.Plan) {
		e.printf("%v\n", p)
		limit.onPlan(p)
		plan = p
	}
	return e.fitDocs(ctx, f, cfg, func(src stream.DocSource, cfg lda.Config) (*models.Model, error) {
		m, err := lda.Fit(ctx, src, cfg)
		if err == nil && plan != nil {
			e.printf("%s\n", planVersusMeasured(f.kind.Name(), plan, m, cpu0))
		}
		return m, err
	})
}

// fitDocs runs fit over the documents of --input, with progress and
// checkpoints, writes the model and prints what was fitted.
func (e *env) fitDocs(ctx context.Context, f *fitFlags, cfg lda.Config, fit func(stream.DocSource, lda.Config) (*models.Model, error)) error {
	start := time.Now()
	p, done := e.startProgress(*f.prog, "fit "+f.kind.Name(), 0)
	defer done()
	f.o.Progress = p
	src, err := e.openDocs(f.topic.spill, "fit", f.input, *f.o)
	if err != nil {
		return err
	}
	defer stream.Close(src)
	cfg.Progress = e.ldaProgress(p, f.kind.Name(), src.Info().Rows)
	if cfg.Checkpoint, err = e.checkpoint(f.topic.ck, f.input, *f.o); err != nil { // checkpoint.go
		return err
	}
	m, err := fit(src, cfg)
	if err != nil {
		return inputNamed(f.input, err)
	}
	if err := e.writeTopicModel(m, f); err != nil {
		return err
	}
	done()
	e.printf("fit %s: %s in %.1fs → %s\n", f.kind.Name(), m.Summary(), time.Since(start).Seconds(), f.out)
	return nil
}

// fitTopicFromStats runs `fit lda|topic --from-stats S [--input F]`: the
// spectral fit from the merged statistics S and, with --input, the EM
// passes over F, which give the model of `fit --input F` with the same
// flags. Without --input the EM passes cannot run: the spectral fit is
// written, with a note on stderr when --em-passes asks for them.
func (e *env) fitTopicFromStats(ctx context.Context, f *fitFlags, s *lda.Settings) error {
	stop, err := f.startOutputs(f.fromStats, f.input, f.o.VocabPath)
	if err != nil {
		return err
	}
	defer stop()
	cfg := f.statsConfig(s)
	if f.input == "" {
		// No EM passes follow, so the start is solved as a pure spectral
		// fit (the model of fit --em-passes 0), unless --em-start asks for
		// the start EM passes run elsewhere refine.
		spectral := cfg
		if !f.topic.emStart {
			spectral.EM = lda.EM{}
		}
		m, err := fitFromStats(ctx, f.fromStats, spectral)
		if err != nil {
			return err
		}
		if cfg.EM.Passes > 0 && !f.topic.emStart {
			e.printf("fit %s: the spectral fit of %s; the EM passes need the documents: give them with --input to run them (--em-passes 0 silences this)\n", f.kind.Name(), f.fromStats)
		}
		return e.writeTopicModel(m, f)
	}
	return e.fitDocs(ctx, f, cfg, func(src stream.DocSource, cfg lda.Config) (*models.Model, error) {
		spectral := cfg
		spectral.Progress, spectral.Checkpoint = nil, lda.Checkpoint{}
		m, err := fitFromStats(ctx, f.fromStats, spectral)
		if err != nil {
			return nil, err
		}
		return m, lda.RefineEM(ctx, src, m, cfg)
	})
}

// statsConfig is the lda.Config of a fit from statistics: k, α₀ and the
// seed come from the statistics unless given explicitly, and so do the
// whitening's settings.
func (f *fitFlags) statsConfig(s *lda.Settings) lda.Config {
	all := f.config(s)
	cfg := lda.Config{Single: all.Single, Workers: all.Workers, Solver: all.Solver, Refine: all.Refine,
		Restarts: all.Restarts, Iters: all.Iters, EM: all.EM}
	if s.Config.Third == lda.Auto {
		cfg.Third = lda.Auto // recorded as fit's plan records its choice
	}
	if f.given("k") {
		cfg.K = all.K
	}
	if f.given("alpha0") {
		cfg.Alpha0 = all.Alpha0
	}
	if f.given("seed") {
		cfg.Seed = all.Seed
	}
	return cfg
}

// writeTopicModel prints the fit's warnings on stderr and writes the model
// (and the topic matrix as Parquet when asked), each file atomically; when the
// second write fails, the first file is removed, so a failed command leaves
// neither.
func (e *env) writeTopicModel(m *models.Model, f *fitFlags) error {
	for _, w := range m.Warnings() {
		e.warn("fit", w)
	}
	if f.noTiming {
		m.ClearTiming()
	}
	pq := f.topic.topicsParquet
	if pq != "" {
		if err := models.WriteTopicsParquet(m, pq); err != nil {
			return err
		}
	}
	if err := m.Write(f.out); err != nil {
		if pq != "" {
			os.Remove(pq)
		}
		return err
	}
	return nil
}

// ldaProgress returns the progress hook of an LDA fit: the stage on p's
// progress line (p nil: none), and on stderr, always, one line per pass
// over the documents when it ends (its time, documents and rate; an EM
// pass's bound), so a log of a batch job shows how the fit went.
func (e *env) ldaProgress(p *stream.Progress, model string, docs int64) func(lda.Progress) {
	var last, took time.Duration // when the previous pass ended, and what it took
	pass, ended := -1, -1
	return func(pr lda.Progress) {
		if pr.Pass != pass {
			pass = pr.Pass
			p.StartPass()
		}
		p.SetStage(ldaStage(pr) + passShare(pr, docs, pr.Elapsed-last))
		if !pr.Done || pr.Stage == "solve" {
			return
		}
		if pr.Pass != ended {
			// A sweep's shared EM pass ends once, with a line per model.
			ended, took = pr.Pass, pr.Elapsed-last
			last = pr.Elapsed
		}
		bound := ""
		if pr.EMPass() {
			bound = fmt.Sprintf("; bound %.5f per token", pr.Bound)
		}
		e.passLine(p, model, pr.Pass, stageOf(pr), took, pr.Elapsed, pr.Docs, "documents", bound)
	}
}

// planVersusMeasured is the line fit prints after an LDA fit: the CPU and
// peak memory the process used since the command's start (cpu0) beside
// the plan's forecast (lda.Plan.Versus).
func planVersusMeasured(model string, plan *lda.Plan, m *models.Model, cpu0 time.Duration) string {
	return fmt.Sprintf("fit %s: %s", model, plan.Versus(m, (sysinfo.CPUTime()-cpu0).Seconds(), sysinfo.PeakRSS()))
}

// passShare is ", N% of the pass, ETA T" for a pass over every document
// (docs of them; < 0 unknown) that has run for took, or "".
func passShare(pr lda.Progress, docs int64, took time.Duration) string {
	if docs <= 0 || pr.Done || pr.Docs <= 0 || pr.Stage == "solve" || pr.OnSample() {
		return ""
	}
	frac := min(float64(pr.Docs)/float64(docs), 1)
	eta := time.Duration(float64(took) * (1 - frac) / frac).Round(time.Second)
	return fmt.Sprintf(", %.0f%% of the pass, ETA %s", 100*frac, eta)
}

// stageOf is a pass's stage as the progress lines name it, with the k of
// the sweep's model it serves.
func stageOf(pr lda.Progress) string {
	if pr.K > 0 {
		return fmt.Sprintf("%s, k=%d", pr.Stage, pr.K)
	}
	return pr.Stage
}

// ldaStage names an LDA fit's stage for the progress line.
func ldaStage(pr lda.Progress) string {
	switch {
	case pr.EMPass() && pr.Done:
		return fmt.Sprintf("pass %d (%s): bound %.5f per token", pr.Pass, stageOf(pr), pr.Bound)
	case pr.Stage != "solve":
		return fmt.Sprintf("pass %d (%s)", pr.Pass, stageOf(pr))
	case pr.Rows > 0:
		return fmt.Sprintf("solve: contraction %d, %d of %d rows", pr.Contraction, pr.Docs, pr.Rows)
	}
	return fmt.Sprintf("solve: contraction %d", pr.Contraction)
}
