package lda

import (
	"context"
	"flag"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Kind is latent Dirichlet allocation in the model registry, and TopicKind
// the exchangeable single-topic model (models/all registers both). Their
// models are models.Model; their settings are *Settings.
var (
	Kind      = &kind{name: "lda", about: "latent Dirichlet allocation on bag-of-words documents (α₀ given)"}
	TopicKind = &kind{name: "topic", about: "exchangeable single-topic model on bag-of-words documents", single: true}
)

// kind is a topic model in the registry.
type kind struct {
	name, about string
	single      bool
}

// Name implements models.Kind.
func (k *kind) Name() string { return k.name }

// Summary implements models.Kind.
func (k *kind) Summary() string { return k.about }

// Settings implements models.Kind: a *Settings.
func (k *kind) Settings(use models.Use) models.Settings {
	return &Settings{Config: Config{Single: k.single}, use: use}
}

// Read implements models.Kind: the model file is a models.Model.
func (k *kind) Read(path string) (models.Fitted, error) {
	m, err := models.Read(path)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Infer implements models.Inferring: the topic shares of each document
// (Infer, with the topics of m fixed and smoothed as ModelParams does).
func (k *kind) Infer(ctx context.Context, m models.Fitted, src stream.DocSource, workers int, emit func(first int64, docs int, shares []float64) error) error {
	tm, ok := m.(*models.Model)
	if !ok {
		return fmt.Errorf("lda: a %T is not a topic model", m)
	}
	p, err := ModelParams(tm, 0)
	if err != nil {
		return err
	}
	return Infer(ctx, src, p, workers, emit)
}

// Shape implements models.Inferring.
func (k *kind) Shape(m models.Fitted) (int, int) {
	tm := m.(*models.Model)
	return tm.K, tm.D
}

// Generator implements models.Generating.
func (k *kind) Generator() models.Generator { return &generator{single: k.single} }

// Settings are the settings of an LDA or single-topic fit as flags give
// them: Config, once Check has read the flags that are not its fields
// (the representation of the third moment, the memory budget, the kind of
// EM passes). K, Seed, Workers and the solver's settings are the caller's
// to set (models.Common).
type Settings struct {
	Config Config
	use    models.Use
	plan   string
	rows   bool // --implicit: the same as --plan implicit
	memory string
	em     string // batch or online
}

// Flags implements models.Settings.
func (s *Settings) Flags(fs *flag.FlagSet) {
	c := &s.Config
	if !c.Single {
		fs.Float64Var(&c.Alpha0, "alpha0", 1, "Dirichlet concentration α₀ of the topic mixture, a finite number > 0")
	}
	fs.Float64Var(&c.EM.Tol, "em-tol", DefaultEMTol, "stop the EM passes when the training bound improved by less than this (> 0), relatively, in a pass")
	fs.BoolVar(&c.EM.FitAlpha, "em-alpha", true, "lda: re-estimate α in every EM pass (Minka's fixed point); false keeps the spectral α̂")
	if s.use == models.StatsFlags {
		fs.Int64Var(&c.CubeSample, "cube-sample", 0, "--phase 2: "+cubeSampleHelp+"; every shard must use the same")
		fs.IntVar(&c.Oversample, "oversample", 0, "extra sketch columns beyond k (0: the default of fit, 10; every shard must use the same)")
		fs.IntVar(&c.ExactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size (0: default, -1: never)")
		fs.IntVar(&c.PowerIters, "power-iters", 0, "phase 2: the power passes of the fit reproduced, which the --basis must hold: 0 as the default fit (one where the first sketch does not decay, else none), -1 none, N exactly N")
		return
	}
	fs.IntVar(&c.Oversample, "oversample", 0, "extra sketch columns beyond k for the randomized whitening (0: the model's default, 10)")
	fs.IntVar(&c.ExactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this dimension (0: model default, -1: never)")
	fs.IntVar(&c.PowerIters, "power-iters", 0, "power passes of the randomized whitening, each one more pass (0 adds one when the first sketch does not decay, -1 never does)")
	fs.IntVar(&c.Refine, "als-sweeps", 0, "CP-ALS sweeps on the whitened tensor after the solver (not the likelihood refinement: see --em-passes)")
	fs.IntVar(&c.EM.Passes, "em-passes", DefaultEMPasses, "cap on the variational EM passes over --input that refine the spectral fit by likelihood (0: the pure spectral fit)")
	fs.Int64Var(&c.EM.Sample, "em-sample", 0, "batch EM on a corpus of more tokens: the first passes run on a seeded sample of the documents of about this many tokens, held in memory, until they converge on it; then --em-full-passes read every document (0: the larger of 2^22 and 4 per topic-word parameter, 4·d·k; -1: every pass reads every document)")
	fs.Int64Var(&c.CubeSample, "cube-sample", 0, cubeSampleHelp)
	fs.IntVar(&c.EM.FullPasses, "em-full-passes", DefaultFullPasses, "batch EM on a sampled corpus (--em-sample): the passes over every document after the sample's (0: none; the sample's passes give the model)")
	fs.Float64Var(&c.EM.FullGain, "em-full-gain", 0, "batch EM on a sampled corpus: skip the passes over every document when the sample's learning curve predicts they would raise the held-out bound by less than this, relatively (0: --em-tol/5, the sample's own stopping tolerance; -1: always run them)")
	fs.StringVar(&s.em, "em", "batch", "the EM passes: batch (one M-step per pass, over-relaxed; the statistics route and Beam run these) or online (an M-step after every --em-minibatch documents, step size (--em-tau0 + t)^-(--em-kappa))")
	fs.IntVar(&c.EM.MiniBatch, "em-minibatch", DefaultMiniBatch, "--em online: documents per M-step")
	fs.Float64Var(&c.EM.Kappa, "em-kappa", DefaultKappa, "--em online: the step size's decay exponent, in (0.5, 1]")
	fs.Float64Var(&c.EM.Tau0, "em-tau0", DefaultTau0, "--em online: the step size's delay (> 0); larger keeps more of the spectral start in the first steps")
	fs.BoolVar(&s.rows, "implicit", false, "the same as --plan implicit")
	fs.StringVar(&s.plan, "plan", "auto", "how to hold the third moment: auto (chosen from k, the vocabulary, the documents and --memory, and printed), explicit (packed k×k×k tensor), implicit (whitened rows on disk, one pass over them per solver iteration) or sketch (tensor sketch)")
	fs.StringVar(&s.memory, "memory", "", "memory budget of the automatic plan, e.g. 2G, also set as the Go runtime's soft memory limit (default: a budget of half the physical memory, and the plan's predicted peak as the soft limit)")
	fs.IntVar(&c.SketchLen, "sketch-len", 0, "with --plan sketch: length of each count sketch (0: chosen from k)")
	fs.IntVar(&c.SketchCount, "sketch-count", 0, "with --plan sketch: number of sketches, combined by their median (0: 3)")
	fs.StringVar(&c.RowDir, "row-dir", "", "with --plan implicit: directory for the temporary row files (default: the system temporary directory)")
}

// Check implements models.Settings: it refuses settings out of range and
// flags that contradict each other, and completes Config from the flags
// that are not its fields.
func (s *Settings) Check(ck models.Check) error {
	c := &s.Config
	if !c.Single && (!(c.Alpha0 > 0) || math.IsInf(c.Alpha0, 1)) {
		return fmt.Errorf("--alpha0=%g: the Dirichlet concentration must be a finite number > 0", c.Alpha0)
	}
	if s.use == models.StatsFlags {
		if !(c.EM.Tol > 0) || math.IsInf(c.EM.Tol, 1) {
			return fmt.Errorf("--em-tol=%g: want a finite tolerance > 0", c.EM.Tol)
		}
		if c.CubeSample < -1 {
			return fmt.Errorf("--cube-sample %d: "+cubeSampleWant, c.CubeSample)
		}
		return nil
	}
	if err := s.checkEM(ck); err != nil {
		return err
	}
	if err := s.third(ck); err != nil {
		return err
	}
	if ck.FromStats && ((ck.Has("plan") && c.Third != Explicit && c.Third != Auto) || s.rows) {
		return fmt.Errorf("--from-stats fits the explicit tensor the statistics hold; --plan %s and --implicit do not apply", s.plan)
	}
	return nil
}

// cubeSampleHelp is the help of --cube-sample (fit and stats).
const cubeSampleHelp = "explicit third moment of a corpus of more tokens: its cubes (K³/6 products a document) are summed over a seeded sample of the documents of about this many tokens, each weighted by the inverse of the sample's share; every other sum reads every document (0: the fit's choice, a sample of the --em-sample default's size on a corpus of at least 4 times as many tokens whose second moment departs from the model, kept only when its measured error is under a quarter of the model's misfit; -1: every document)"

// cubeSampleWant says what --cube-sample takes.
const cubeSampleWant = "want a number of tokens, 0 for the fit's choice or -1 for every document"

// checkEM refuses an unknown --em, online settings outside their ranges,
// online-only flags with batch EM, and sample sizes out of range; no full
// passes (0) is EM's negative setting.
func (s *Settings) checkEM(ck models.Check) error {
	e := &s.Config.EM
	switch {
	case s.Config.CubeSample < -1:
		return fmt.Errorf("--cube-sample %d: "+cubeSampleWant, s.Config.CubeSample)
	case e.Sample < -1:
		return fmt.Errorf("--em-sample %d: want a number of tokens, 0 for the default or -1 for none", e.Sample)
	case e.FullPasses < 0:
		return fmt.Errorf("--em-full-passes %d: want a number of passes ≥ 0", e.FullPasses)
	}
	if e.FullPasses == 0 {
		e.FullPasses = -1
	}
	switch s.em {
	case "batch":
		for _, name := range []string{"em-minibatch", "em-kappa", "em-tau0"} {
			if ck.Has(name) {
				return fmt.Errorf("--%s is a setting of --em online", name)
			}
		}
		e.MiniBatch, e.Kappa, e.Tau0 = 0, 0, 0
		return nil
	case "online":
	default:
		return fmt.Errorf("--em %q: want batch or online", s.em)
	}
	if !(e.Kappa > 0.5 && e.Kappa <= 1) {
		return fmt.Errorf("--em-kappa %g: want a value in (0.5, 1]", e.Kappa)
	}
	if !(e.Tau0 > 0) || math.IsInf(e.Tau0, 0) {
		return fmt.Errorf("--em-tau0 %g: want a finite value > 0", e.Tau0)
	}
	e.Online = true
	return nil
}

// third reads --plan, --implicit, --memory and the sketch's size into
// Config.Third and Config.Memory.
func (s *Settings) third(ck models.Check) error {
	c := &s.Config
	c.Third = Third(s.plan)
	switch c.Third {
	case Auto, Explicit, Rows, Sketch:
	default:
		return fmt.Errorf("--plan=%s: want auto, explicit, implicit or sketch", s.plan)
	}
	if s.rows {
		if ck.Has("plan") && c.Third != Rows {
			return fmt.Errorf("--implicit is --plan implicit; it contradicts --plan %s", c.Third)
		}
		c.Third = Rows
	}
	if c.SketchLen < 0 || c.SketchLen == 1 || c.SketchCount < 0 {
		return fmt.Errorf("--sketch-len=%d and --sketch-count=%d: want a length of at least 2 and a positive count (0: default)", c.SketchLen, c.SketchCount)
	}
	if s.memory != "" {
		var err error
		if c.Memory, err = ParseBytes(s.memory); err != nil {
			return fmt.Errorf("--memory: %w", err)
		}
	}
	return nil
}

// Rows reports whether the settings ask to keep the whitened rows on disk
// (--plan implicit or --implicit).
func (s *Settings) Rows() bool { return s.Config.Third == Rows }

// generator draws corpora from an LDA or single-topic model.
type generator struct{ single bool }

func (g *generator) Name() string {
	if g.single {
		return TopicKind.name
	}
	return Kind.name
}

func (g *generator) About() string {
	return "Draws a corpus from an LDA (or single-topic) model and writes it as Parquet, Arrow or UCI docword (by the name of --out), with the model in a JSON truth file."
}

func (g *generator) Flags(fs *flag.FlagSet) func() (models.TruthWriter, error) {
	cfg := synth.LDAConfig{Single: g.single}
	fs.Int64Var(&cfg.Docs, "docs", 10000, "number of documents")
	fs.IntVar(&cfg.Vocab, "vocab", 2000, "vocabulary size d")
	fs.IntVar(&cfg.K, "k", 10, "number of topics")
	if !g.single {
		fs.Float64Var(&cfg.Alpha0, "alpha0", 1, "Dirichlet concentration α₀ = Σαᵢ")
	}
	fs.Float64Var(&cfg.DocLen, "doc-len", 200, "mean document length (Poisson, at least 3)")
	fs.Float64Var(&cfg.Beta, "beta", 0.1, "symmetric Dirichlet parameter of the topics")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.IntVar(&cfg.Workers, "workers", 0, "generating goroutines (default: one per CPU; the output does not depend on it)")
	return func() (models.TruthWriter, error) {
		c, err := synth.NewLDA(cfg)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}
