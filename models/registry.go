package models

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// Kind is a model as the outer layer sees it: the command line and the
// pipelines find every model here, by name, and never name one themselves.
// A model package describes itself by a Kind value and registers it once
// (Register; models/all registers every model of streamfit).
//
// What a model can do beyond being named and read is said by the
// interfaces its values implement: a Kind whose Settings are DenseSettings
// is fitted from dense sample rows by the passes of a plan, and its
// statistics are computed, merged and fitted from by the generic shard
// workflow; a Kind that implements Generating draws data with known truth;
// a Fitted model that implements Evaluator is scored against its truth.
type Kind interface {
	// Name names the model: the "model" field of its model, truth and
	// statistics files, and the word that selects it on the command line.
	Name() string
	// Summary describes the model in one line.
	Summary() string
	// Settings returns the settings of a fit of the model at their
	// defaults, whose flags are those that use reads.
	Settings(use Use) Settings
	// Read reads a model file of the kind: a fitted model or a truth file.
	Read(path string) (Fitted, error)
}

// Use says which command binds a model's settings to flags: the statistics
// of a pass depend on fewer settings than the fit.
type Use int

const (
	// FitFlags are the settings of a whole fit (streamfit fit MODEL, a
	// pipeline that fits).
	FitFlags Use = iota
	// StatsFlags are the settings the statistics of a pass depend on
	// (streamfit stats MODEL).
	StatsFlags
)

// Settings are the settings of one fit of a model, beyond Common. They
// bind to flags, and a pipeline sends them to its workers as JSON.
type Settings interface {
	// Flags registers the settings' flags on fs; parsing fs sets them.
	Flags(fs *flag.FlagSet)
	// Check validates the settings once the flags are parsed. Its errors
	// are mistakes of the caller (a command line's usage errors).
	Check(c Check) error
}

// Check is what Settings.Check may consult besides the settings.
type Check struct {
	// Given reports whether the flag name was given (nil: none was).
	Given func(name string) bool
	// Read is how the input is read (its columns); nil when there is none.
	Read *stream.Options
	// FromStats says the fit is from statistics, not from an input.
	FromStats bool
	// Rows says, with FromStats, that the input's rows are at hand as well,
	// for the likelihood passes that follow the moment fit (fit
	// --from-stats --input).
	Rows bool
}

// NoRows reports whether the fit has statistics but no rows to read: its
// likelihood passes cannot run.
func (c Check) NoRows() bool { return c.FromStats && !c.Rows }

// Has reports whether the flag name was given.
func (c Check) Has(name string) bool { return c.Given != nil && c.Given(name) }

// Given returns the function that reports whether a flag of fs was given on
// the command line (Check.Given), once fs is parsed.
func Given(fs *flag.FlagSet) func(name string) bool {
	return func(name string) bool {
		found := false
		fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
		return found
	}
}

// Common are the settings every fit reads, whatever the model: the number
// of components, the seed, the tensor decomposition and the goroutines.
type Common struct {
	// K is the number of topics, components or states.
	K int `json:"k"`
	// Seed fixes every random choice.
	Seed uint64 `json:"seed"`
	// Solver names the tensor decomposition (solver.ByName); "" lets the
	// model choose.
	Solver string `json:"solver,omitempty"`
	// Restarts and Iters tune the solver (0: its defaults).
	Restarts int `json:"restarts,omitempty"`
	Iters    int `json:"iters,omitempty"`
	// Workers is the number of goroutines per pass (0: one per CPU where
	// the caller chose so, else the model's default).
	Workers int `json:"workers,omitempty"`
}

// Fitted is a fitted model (or a truth file) of some Kind.
type Fitted interface {
	// Write stores the model at path atomically.
	Write(path string) error
	// Summary says in one line what was fitted.
	Summary() string
	// Warnings are the fit's doubts that did not stop it (a solver that
	// did not converge); none for a truth file.
	Warnings() []string
	// ClearTiming leaves the fit's wall time out of the model file, so
	// that the same input and seed give the same bytes.
	ClearTiming()
}

// Evaluator is a fitted model that can be scored against the truth it was
// generated from (a model of the same kind, read by Kind.Read).
type Evaluator interface {
	// Eval compares the model with truth, returning the metrics as a value
	// that marshals to JSON. An error says why they cannot be compared.
	Eval(truth Fitted) (any, error)
}

// DenseSettings are the Settings of a model fitted from dense sample rows
// through the passes of a plan (implicit.Planner), each of whose
// statistics add up over shards.
type DenseSettings interface {
	Settings
	// Passes returns the fit's passes with these settings and c.
	Passes(c Common) Passes
	// Fit fits the model from the rows of src in the passes of its plan.
	Fit(ctx context.Context, src stream.DenseSource, c Common) (Fitted, error)
	// FitStats fits the model from the merged statistics of its last pass.
	FitStats(ctx context.Context, st *implicit.DenseStats, c Common) (Fitted, error)
}

// Passes describe the passes of a fit of dense rows, for the shard workflow
// (models/shard) and pipelines.
type Passes struct {
	// Plan returns the model's planner, naming path (an input file) in its
	// errors.
	Plan func(path string) implicit.Planner
	// Group names what the group column of the rows identifies ("sequence",
	// "set") for a model whose passes read groups of rows in order, so that
	// every shard owns the groups that begin in it; "" when rows are read
	// one at a time.
	Group string
	// MaxPasses is the most passes the fit takes, whatever the data: a
	// pipeline built before it reads them sizes its stages by it.
	MaxPasses int
	// About says, for help texts, what the passes are, which of them take
	// a basis and which can be appended to.
	About string
}

// Inferring is a Kind whose models give every document shares of their
// components (streamfit infer).
type Inferring interface {
	// Infer calls emit with the shares under the model m of the documents
	// of src, a batch at a time in document order: docs documents from the
	// source's document first, shares holding k per document (emit must
	// not keep it); workers bounds the goroutines (0: one per CPU).
	Infer(ctx context.Context, m Fitted, src stream.DocSource, workers int, emit func(first int64, docs int, shares []float64) error) error
	// Shape returns m's number of components k and vocabulary size d.
	Shape(m Fitted) (k, d int)
}

// RowInferring is a Kind of dense sample rows whose models may give every
// row shares of their components (streamfit infer): a Gaussian mixture's
// responsibilities, scikit-learn's predict_proba. A kind that implements
// it infers when InfersRows says so.
type RowInferring interface {
	// InfersRows reports whether the kind's models give rows shares.
	InfersRows() bool
	// InferRows calls emit with the shares under the model m of the rows
	// of src, a batch at a time in row order: rows rows from the source's
	// row first, shares holding k per row (emit must not keep it); workers
	// bounds the goroutines (0: one per CPU).
	InferRows(ctx context.Context, m Fitted, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error
	// Shape returns m's number of components k and row width d.
	Shape(m Fitted) (k, d int)
}

// RowScoring is a Kind of dense sample rows whose models may score
// held-out rows by their likelihood (streamfit eval --heldout): a Gaussian
// mixture's average log-likelihood per row, scikit-learn's score. A kind
// that implements it scores when ScoresRows says so.
type RowScoring interface {
	// ScoresRows reports whether the kind's models score rows.
	ScoresRows() bool
	// ScoreRows returns the score of the rows of src under the model m;
	// workers bounds the goroutines (0: one per CPU) and does not change
	// the figure.
	ScoreRows(ctx context.Context, m Fitted, src stream.DenseSource, workers int) (*RowScore, error)
}

// RowScore is the held-out score of a model on dense rows.
type RowScore struct {
	Rows int64 `json:"rows"`
	// LogLik is the average log-likelihood per row, (1/n) Σ log p(x).
	LogLik float64 `json:"loglik_per_row"`
}

// Scores reports whether the models of k score held-out rows
// (RowScoring).
func Scores(k Kind) bool {
	r, ok := k.(RowScoring)
	return ok && r.ScoresRows()
}

// Infers reports whether the models of k give shares of their components
// to documents (Inferring) or to sample rows (RowInferring).
func Infers(k Kind) bool {
	if _, ok := k.(Inferring); ok {
		return true
	}
	r, ok := k.(RowInferring)
	return ok && r.InfersRows()
}

// Generating is a Kind that draws data with known truth (streamfit gen).
type Generating interface {
	// Generator returns the model's generator.
	Generator() Generator
}

// Generator draws a data set from a model with known parameters.
type Generator interface {
	// Name names the generator (streamfit gen NAME); several kinds may
	// share one (the snapshots of a Markov chain or an HMM).
	Name() string
	// About describes what it writes, for its help.
	About() string
	// Flags registers the generator's settings on fs and returns the
	// function that, once fs is parsed, draws the model and returns the
	// data: a stream.DocSource or a stream.DenseSource that is also a
	// TruthWriter. Its errors are mistakes in the settings.
	Flags(fs *flag.FlagSet) func() (TruthWriter, error)
}

// TruthWriter writes the truth behind generated data: a file that reads as
// a model of its kind (Kind.Read).
type TruthWriter interface {
	WriteTruth(path string) error
}

var (
	regMu sync.RWMutex
	kinds []Kind
)

// ErrUnknown reports a model name that no registered Kind has.
var ErrUnknown = errors.New("unknown model")

// Register adds k to the registry. It panics when k's name is empty or
// taken: registration happens once, at start-up, and a clash is a
// programming error.
func Register(k Kind) {
	regMu.Lock()
	defer regMu.Unlock()
	if k.Name() == "" {
		panic("models: Register of a kind without a name")
	}
	if slices.ContainsFunc(kinds, func(o Kind) bool { return o.Name() == k.Name() }) {
		panic("models: Register of " + k.Name() + " twice")
	}
	kinds = append(kinds, k)
}

// Lookup returns the registered kind called name, or an error wrapping
// ErrUnknown that lists the known ones.
func Lookup(name string) (Kind, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	for _, k := range kinds {
		if k.Name() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknown, name, names(kinds))
}

// Kinds returns the registered kinds in the order of registration.
func Kinds() []Kind {
	regMu.RLock()
	defer regMu.RUnlock()
	return slices.Clone(kinds)
}

// Names returns the names of the registered kinds that keep reports true,
// in the order of registration (all of them when keep is nil).
func Names(keep func(Kind) bool) []string {
	var out []Kind
	for _, k := range Kinds() {
		if keep == nil || keep(k) {
			out = append(out, k)
		}
	}
	return names(out)
}

func names(ks []Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name()
	}
	return out
}

// IsDense reports whether k is fitted from dense rows (its Settings are
// DenseSettings).
func IsDense(k Kind) bool {
	_, ok := k.Settings(StatsFlags).(DenseSettings)
	return ok
}

// Generators returns the generators of the registered kinds, each once, in
// the order of registration.
func Generators() []Generator {
	var out []Generator
	for _, k := range Kinds() {
		g, ok := k.(Generating)
		if !ok {
			continue
		}
		gen := g.Generator()
		if gen == nil {
			continue
		}
		if !slices.ContainsFunc(out, func(o Generator) bool { return o.Name() == gen.Name() }) {
			out = append(out, gen)
		}
	}
	return out
}

// Apply sets the settings of a model's Config that c gives (its non-zero
// fields) through the pointers to them; a nil pointer is a setting the
// model does not have.
func (c Common) Apply(k *int, seed *uint64, solver *string, restarts, iters, workers *int) {
	set := func(p *int, v int) {
		if p != nil && v != 0 {
			*p = v
		}
	}
	set(k, c.K)
	set(restarts, c.Restarts)
	set(iters, c.Iters)
	set(workers, c.Workers)
	if seed != nil && c.Seed != 0 {
		*seed = c.Seed
	}
	if solver != nil && c.Solver != "" {
		*solver = c.Solver
	}
}

// WhiteningFlags registers the flags of the randomized whitening that the
// dense models share: the dimension up to which it is exact, and the
// sketch's extra columns and power passes.
func WhiteningFlags(fs *flag.FlagSet, exactDim, oversample, powerIters *int) {
	fs.IntVar(oversample, "oversample", 0, "extra sketch columns beyond k for the randomized whitening (0: the model's default, 10)")
	fs.IntVar(powerIters, "power-iters", 0, "power passes of the randomized whitening (0: the model's default, 2; -1: none)")
	fs.IntVar(exactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this dimension (0: model default, -1: never)")
}

// GroupOf returns what the group column of the rows of k identifies
// (Passes.Group) when k is fitted from dense rows read in groups, else "".
func GroupOf(k Kind) string {
	if ds, ok := k.Settings(StatsFlags).(DenseSettings); ok {
		return ds.Passes(Common{}).Group
	}
	return ""
}
