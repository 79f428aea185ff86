package models

import (
	"context"
	"flag"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// DenseKind is the Kind of a model of dense sample rows, made of the
// functions of its package: C is the model's Config, M its fitted model.
// Every field is required but Gen, Infer and Score.
type DenseKind[C any, M Fitted] struct {
	// KindName and About are the kind's Name and Summary.
	KindName, About string
	// Flags binds the settings in c that use reads to fs (the model's own
	// flags, beyond Common). It returns the check to run once they are
	// parsed, which completes c from flags that are not fields of C (nil:
	// none).
	Flags func(fs *flag.FlagSet, c *C, use Use) func(c *C, ck Check) error
	// Common sets the settings every model shares in c.
	Common func(c *C, common Common)
	// Passes returns the passes of a fit with the settings c.
	Passes func(c C) Passes
	// Fit and FitStats fit the model from rows and from the merged
	// statistics of its last pass.
	Fit      func(context.Context, stream.DenseSource, C) (M, error)
	FitStats func(context.Context, *implicit.DenseStats, C) (M, error)
	// ReadModel reads a model or truth file.
	ReadModel func(path string) (M, error)
	// Gen is the model's generator, if it has one.
	Gen Generator
	// Infer gives each row of src shares of m's components, if the
	// model's rows have them (RowInferring); nil when they do not.
	Infer *RowInference[M]
	// Score gives the held-out score of the rows of src under m, if the
	// model has a likelihood (RowScoring); nil when it has none.
	Score func(ctx context.Context, m M, src stream.DenseSource, workers int) (*RowScore, error)
}

// RowInference is how the models M of a DenseKind give every sample row
// shares of their components (RowInferring.InferRows and Shape).
type RowInference[M any] struct {
	Rows  func(ctx context.Context, m M, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error
	Shape func(m M) (k, d int)
}

// InfersRows implements RowInferring: whether Infer is set.
func (k *DenseKind[C, M]) InfersRows() bool { return k.Infer != nil }

// InferRows implements RowInferring.
func (k *DenseKind[C, M]) InferRows(ctx context.Context, m Fitted, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error {
	mm, ok := m.(M)
	switch {
	case k.Infer == nil:
		return fmt.Errorf("%s: the model gives its rows no shares", k.KindName)
	case !ok:
		return fmt.Errorf("%s: a %T is not a %s model", k.KindName, m, k.KindName)
	}
	return k.Infer.Rows(ctx, mm, src, workers, emit)
}

// Shape implements RowInferring; 0, 0 when the kind does not infer.
func (k *DenseKind[C, M]) Shape(m Fitted) (int, int) {
	mm, ok := m.(M)
	if k.Infer == nil || !ok {
		return 0, 0
	}
	return k.Infer.Shape(mm)
}

// ScoresRows implements RowScoring: whether Score is set.
func (k *DenseKind[C, M]) ScoresRows() bool { return k.Score != nil }

// ScoreRows implements RowScoring.
func (k *DenseKind[C, M]) ScoreRows(ctx context.Context, m Fitted, src stream.DenseSource, workers int) (*RowScore, error) {
	mm, ok := m.(M)
	switch {
	case k.Score == nil:
		return nil, fmt.Errorf("%s: the model gives rows no likelihood", k.KindName)
	case !ok:
		return nil, fmt.Errorf("%s: a %T is not a %s model", k.KindName, m, k.KindName)
	}
	return k.Score(ctx, mm, src, workers)
}

// Name implements Kind.
func (k *DenseKind[C, M]) Name() string { return k.KindName }

// Summary implements Kind.
func (k *DenseKind[C, M]) Summary() string { return k.About }

// Settings implements Kind: the settings are DenseSettings.
func (k *DenseKind[C, M]) Settings(use Use) Settings { return &denseSettings[C, M]{kind: k, use: use} }

// Read implements Kind.
func (k *DenseKind[C, M]) Read(path string) (Fitted, error) {
	m, err := k.ReadModel(path)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// denseSettings are the Settings of a DenseKind: the model's Config, which
// is what a pipeline sends to its workers as JSON.
type denseSettings[C any, M Fitted] struct {
	kind   *DenseKind[C, M]
	use    Use
	check  func(*C, Check) error
	Config C `json:"config"`
}

// Flags implements Settings.
func (s *denseSettings[C, M]) Flags(fs *flag.FlagSet) {
	s.check = s.kind.Flags(fs, &s.Config, s.use)
}

// Check implements Settings.
func (s *denseSettings[C, M]) Check(c Check) error {
	if s.check == nil {
		return nil
	}
	return s.check(&s.Config, c)
}

// config is the model's Config with the common settings.
func (s *denseSettings[C, M]) config(c Common) C {
	cfg := s.Config
	s.kind.Common(&cfg, c)
	return cfg
}

// Passes implements DenseSettings.
func (s *denseSettings[C, M]) Passes(c Common) Passes { return s.kind.Passes(s.config(c)) }

// Fit implements DenseSettings.
func (s *denseSettings[C, M]) Fit(ctx context.Context, src stream.DenseSource, c Common) (Fitted, error) {
	return fitted(s.kind.Fit(ctx, src, s.config(c)))
}

// FitStats implements DenseSettings.
func (s *denseSettings[C, M]) FitStats(ctx context.Context, st *implicit.DenseStats, c Common) (Fitted, error) {
	return fitted(s.kind.FitStats(ctx, st, s.config(c)))
}

// fitted returns m as a Fitted, or the error (never a typed nil).
func fitted[M Fitted](m M, err error) (Fitted, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Generator implements Generating for a kind with a generator; the
// registry asks for it only when it is set (see Generators).
func (k *DenseKind[C, M]) Generator() Generator { return k.Gen }

// EvalAs implements Evaluator.Eval for a model m of type M whose package
// compares two models with eval: truth must be an M too.
func EvalAs[M any, E any](m M, truth Fitted, eval func(fit, truth M) (E, error)) (any, error) {
	t, ok := truth.(M)
	if !ok {
		return nil, fmt.Errorf("a %T cannot be compared with a %T", truth, m)
	}
	e, err := eval(m, t)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DenseData is generated dense rows with their truth: what the New of a
// dense model's Generator returns.
type DenseData struct {
	stream.DenseSource
	// Truth is the model the rows are drawn from, as its package's model
	// type; Params say how the rows were generated.
	Truth  any
	Params map[string]any
}

// WriteTruth writes Truth with Params as a truth file (synth.WriteTruth).
func (d DenseData) WriteTruth(path string) error {
	return synth.WriteTruth(path, d.Truth, d.Params, nil)
}

// Gen is a Generator made of the functions of a model's package: C is the
// configuration of its generator (a stream/synth config).
type Gen[C any] struct {
	// GenName and AboutText are the generator's Name and About.
	GenName, AboutText string
	// Config is the configuration before the flags.
	Config C
	// Bind registers the flags that set c.
	Bind func(fs *flag.FlagSet, c *C)
	// Draw draws the data from c.
	Draw func(c C) (TruthWriter, error)
}

// Name implements Generator.
func (g *Gen[C]) Name() string { return g.GenName }

// About implements Generator.
func (g *Gen[C]) About() string { return g.AboutText }

// Flags implements Generator: it binds a copy of Config.
func (g *Gen[C]) Flags(fs *flag.FlagSet) func() (TruthWriter, error) {
	c := g.Config
	g.Bind(fs, &c)
	return func() (TruthWriter, error) { return g.Draw(c) }
}

// GenFlags points at the settings that the dense generators share, for
// SampleFlags; a nil pointer is a setting the generator does not have.
// Each flag's default is the value pointed at.
type GenFlags struct {
	Seed   *uint64
	K      *int
	Rows   *int64
	D      *int
	Sigma2 *float64
}

// Bind registers the shared flags of a dense generator on fs.
func (g GenFlags) Bind(fs *flag.FlagSet) {
	if g.Seed != nil {
		fs.Uint64Var(g.Seed, "seed", *g.Seed, "random seed")
	}
	if g.K != nil {
		fs.IntVar(g.K, "k", *g.K, "components, sources or states")
	}
	if g.Rows != nil {
		fs.Int64Var(g.Rows, "rows", *g.Rows, "number of samples")
	}
	if g.D != nil {
		fs.IntVar(g.D, "d", *g.D, "dimension (of the observations)")
	}
	if g.Sigma2 != nil {
		fs.Float64Var(g.Sigma2, "sigma2", *g.Sigma2, "noise variance (0: the model's default)")
	}
}

// Record is a dense model's fit record (a pointer to its FitRecord, nil in
// a truth file): what the Fitted methods every such model shares read.
type Record[T any] interface {
	*T
	// Shared returns the parts every fit record has: whether the
	// decompositions converged (with their warnings), and the wall time.
	Shared() (*Convergence, *float64)
}

// RecordWarnings implements Fitted.Warnings for a model whose fit record
// is r.
func RecordWarnings[T any, R Record[T]](r R) []string {
	if r == nil {
		return nil
	}
	c, _ := r.Shared()
	return c.Warnings
}

// ClearRecordTiming implements Fitted.ClearTiming for a model whose fit
// record is r.
func ClearRecordTiming[T any, R Record[T]](r R) {
	if r != nil {
		_, s := r.Shared()
		*s = 0
	}
}

// Drawn returns the function that turns the rows g a dense model's
// generator drew (or its error) into its Generator's data: the rows with the
// model they are drawn from and how (truth).
func Drawn[G stream.DenseSource](truth func(G) (model any, params map[string]any)) func(g G, err error) (TruthWriter, error) {
	return func(g G, err error) (TruthWriter, error) {
		if err != nil {
			return nil, err
		}
		m, params := truth(g)
		return DenseData{DenseSource: g, Truth: m, Params: params}, nil
	}
}
