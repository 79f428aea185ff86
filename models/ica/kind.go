package ica

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// Kind is independent component analysis in the model registry (models/all
// registers it).
var Kind = &models.DenseKind[Config, *Model]{
	KindName: "ica",
	About:    "independent component analysis on dense samples: the fourth cumulant, then FastICA's logcosh steps",
	Flags: func(fs *flag.FlagSet, c *Config, use models.Use) func(*Config, models.Check) error {
		models.WhiteningFlags(fs, &c.ExactDim, &c.Oversample, &c.PowerIters)
		fs.StringVar(&c.Contrast, "contrast", ContrastLogcosh, "what the polishing passes after the solver maximise: logcosh (FastICA's tanh fixed point, robust on heavy-tailed sources) or kurtosis (the fourth cumulant's own fixed point)")
		fs.IntVar(&c.Refine, "refine", 0, fmt.Sprintf("the most polishing passes (0: %d for logcosh, 2 for kurtosis; -1: none)", DefaultLogcoshSteps))
		if use == models.StatsFlags {
			// The polishing passes are the solver's: their statistics
			// depend on it.
			fs.StringVar(&c.Solver, "solver", DefaultSolver, "the tensor solver, whose answer the polishing passes start from (as fit's)")
			fs.IntVar(&c.Restarts, "restarts", 0, "solver restarts (as fit's)")
			fs.IntVar(&c.Iters, "iters", 0, "solver iterations (as fit's)")
		}
		return nil
	},
	Common: func(c *Config, m models.Common) {
		m.Apply(&c.K, &c.Seed, &c.Solver, &c.Restarts, &c.Iters, &c.Workers)
	},
	Passes: func(c Config) models.Passes {
		return models.Passes{Plan: func(path string) implicit.Planner { return &Plan{Config: c, Path: path} }, MaxPasses: c.MaxPasses(), About: icaPasses}
	},
	Fit:       Fit,
	FitStats:  FitStats,
	ReadModel: Read,
	Gen: &models.Gen[synth.ICAConfig]{
		GenName:   "ica",
		AboutText: "Draws a dense sample table of independent sources, mixed, and writes it as Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>), with the model in a JSON truth file.",
		Config:    synth.ICAConfig{Rows: 100000, D: 20, K: 5, Seed: 1},
		Bind: func(fs *flag.FlagSet, c *synth.ICAConfig) {
			models.GenFlags{Seed: &c.Seed, K: &c.K, Rows: &c.Rows, D: &c.D}.Bind(fs)
		},
		Draw: func(c synth.ICAConfig) (models.TruthWriter, error) {
			return models.Drawn(func(g *synth.ICA) (any, map[string]any) { return TruthOf(g), g.Params })(synth.NewICA(c))
		},
	},
}

// TruthOf returns the mixing the rows of g are drawn from, as a fit
// returns it.
func TruthOf(g *synth.ICA) *Model {
	t := g.Truth
	return &Model{Model: "ica", K: t.K, D: t.D, Mixing: t.Mixing, Kurtosis: t.Kurtosis}
}

// Summary implements models.Fitted.
func (m *Model) Summary() string { return fmt.Sprintf("k=%d", m.K) }

// Warnings implements models.Fitted.
func (m *Model) Warnings() []string { return models.RecordWarnings(m.Fit) }

// ClearTiming implements models.Fitted.
func (m *Model) ClearTiming() { models.ClearRecordTiming(m.Fit) }

// Shared implements models.Record.
func (f *FitRecord) Shared() (*models.Convergence, *float64) { return &f.Convergence, &f.Seconds }

// Eval implements models.Evaluator (Eval).
func (m *Model) Eval(truth models.Fitted) (any, error) { return models.EvalAs(m, truth, Eval) }

// Section implements models.Reported: the kurtoses, the mixing matrix and
// its pseudo-inverse.
func (m *Model) Section() models.Section {
	s := models.Section{K: m.K, D: m.D}
	comp := models.Labels("source ", m.K)
	dims := models.Labels("x", m.D)
	s.Bars("Excess kurtosis of each source", "Far from 0: a clearly non-Gaussian source, well identified.", comp, m.Kurtosis)
	s.Heat("Mixing matrix A (columns as rows)", "Row i is the estimated column aᵢ of A (up to sign and scale).", comp, dims, m.Mixing, true)
	if w, err := unmixing(m.Mixing); err == nil {
		s.Heat("Unmixing matrix A⁺", "Row i recovers source i from a sample: sᵢ ≈ (A⁺x)ᵢ.", comp, dims, w, true)
	} else {
		s.Notes = append(s.Notes, "The unmixing matrix is not shown: "+err.Error())
	}
	if f := m.Fit; f != nil {
		s.DenseFit(f.Rows, m.D, f.Passes, f.Solver, f.Seconds, f.Convergence)
		s.Fact("second moment", f.Method)
		s.Fact("noise variance σ²", models.FormatNum(f.Sigma2))
		s.Fact("refinement iterations", strconv.Itoa(f.RefineIters))
		if f.Contrast != "" {
			s.Fact("refinement contrast", f.Contrast)
		}
	}
	return s
}

// unmixing returns the k rows of A⁺ for the d×k mixing matrix A whose
// columns are given as rows.
func unmixing(cols [][]float64) ([][]float64, error) {
	k, dim := len(cols), len(cols[0])
	a := mat.NewDense(dim, k, nil)
	for j, c := range cols {
		a.SetCol(j, c)
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, fmt.Errorf("the SVD of the mixing matrix failed")
	}
	vals := svd.Values(nil)
	if vals[len(vals)-1] <= vals[0]*1e-12 {
		return nil, fmt.Errorf("the mixing matrix is singular (condition number > 1e12)")
	}
	eye := mat.NewDense(dim, dim, nil)
	for i := range dim {
		eye.Set(i, i, 1)
	}
	var pinv mat.Dense
	svd.SolveTo(&pinv, eye, len(vals))
	out := make([][]float64, k)
	for i := range k {
		out[i] = mat.Row(nil, i, &pinv)
	}
	return out, nil
}

// icaPasses are the passes of a fit, for help texts.
const icaPasses = `exact (d ≤ --exact-dim, default 512): pass 1 (moments up to the second),
pass 2 (whitened third-order contraction), then one pass per polishing
step (--solver, --restarts, --iters and --seed decide them; stats on merged
statistics says which pass is the last). Sketched (d > --exact-dim):
1 + --power-iters (default 2) passes of the covariance's range finder come
between pass 1 and the whitened pass. Only pass 1 can be appended to.`
