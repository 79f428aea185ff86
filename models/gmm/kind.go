package gmm

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// Kind is the spherical Gaussian mixture in the model registry (models/all
// registers it).
var Kind = &models.DenseKind[Config, *Model]{
	KindName: "gmm",
	About:    "Gaussian mixture on dense samples: spherical (common or differing variances) or, by EM, diagonal",
	Flags: func(fs *flag.FlagSet, c *Config, use models.Use) func(*Config, models.Check) error {
		models.WhiteningFlags(fs, &c.ExactDim, &c.Oversample, &c.PowerIters)
		fs.BoolVar(&c.Differing, "differing", false, "a variance per component in the moment fit with --em-passes 0 (the EM passes always start from one, and fit one per component, or per component and feature with --covariance diag)")
		fs.Float64Var(&c.Sigma2, "sigma2", 0, "known common variance (0: estimate it; negative is an error)")
		if use == models.FitFlags {
			emFlags(fs, c)
			covarianceFlag(fs, c)
		}
		return func(c *Config, ck models.Check) error {
			if c.Sigma2 < 0 {
				return fmt.Errorf("--sigma2=%g: a variance cannot be negative (0 estimates it)", c.Sigma2)
			}
			if err := checkCovariance(c, ck); err != nil {
				return err
			}
			return checkEM(c, ck)
		}
	},
	Common: func(c *Config, m models.Common) {
		m.Apply(&c.K, &c.Seed, &c.Solver, &c.Restarts, &c.Iters, &c.Workers)
	},
	Passes: func(c Config) models.Passes {
		return models.Passes{Plan: func(path string) implicit.Planner { return &Plan{Config: c, Path: path} }, MaxPasses: c.MaxPasses(), About: gmmPasses}
	},
	Fit:       Fit,
	FitStats:  FitStats,
	ReadModel: Read,
	Infer: &models.RowInference[*Model]{
		Rows:  Responsibilities,
		Shape: (*Model).dims,
	},
	Score: LogLikelihood,
	Gen: &models.Gen[synth.GMMConfig]{
		GenName:   "gmm",
		AboutText: "Draws a dense sample table from a Gaussian mixture and writes it as Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>), with the model in a JSON truth file.",
		Config:    synth.GMMConfig{Rows: 100000, D: 20, K: 5, Seed: 1},
		Bind: func(fs *flag.FlagSet, c *synth.GMMConfig) {
			models.GenFlags{Seed: &c.Seed, K: &c.K, Rows: &c.Rows, D: &c.D, Sigma2: &c.Sigma2}.Bind(fs)
			fs.BoolVar(&c.Differing, "differing", false, "a variance per component")
		},
		Draw: func(c synth.GMMConfig) (models.TruthWriter, error) {
			c.Workers = runtime.GOMAXPROCS(0)
			return models.Drawn(func(g *synth.GMM) (any, map[string]any) { return TruthOf(g), g.Params })(synth.NewGMM(c))
		},
	},
}

// TruthOf returns the mixture the rows of g are drawn from, as a fit
// returns it.
func TruthOf(g *synth.GMM) *Model {
	t := g.Truth
	return &Model{Model: "gmm", K: t.K, D: t.D, Weights: t.Weights, Means: t.Means, Variances: t.Variances}
}

// Summary implements models.Fitted.
func (m *Model) Summary() string {
	if m.Fit == nil {
		return fmt.Sprintf("%d components in d=%d", m.K, m.D)
	}
	s := fmt.Sprintf("%d components in d=%d from %d rows, %d passes (%s)", m.K, m.D, m.Fit.Rows, m.Fit.Passes, m.Fit.Method)
	if m.IsDiag() {
		s = "diagonal covariances: " + s
	}
	if e := m.Fit.EM; e != nil {
		s += emSummary(e)
	}
	return s
}

// Warnings implements models.Fitted.
func (m *Model) Warnings() []string { return models.RecordWarnings(m.Fit) }

// ClearTiming implements models.Fitted.
func (m *Model) ClearTiming() { models.ClearRecordTiming(m.Fit) }

// Shared implements models.Record.
func (f *FitRecord) Shared() (*models.Convergence, *float64) { return &f.Convergence, &f.Seconds }

// Eval implements models.Evaluator (Eval).
func (m *Model) Eval(truth models.Fitted) (any, error) { return models.EvalAs(m, truth, Eval) }

// Section implements models.Reported: the weights, variances and means.
func (m *Model) Section() models.Section {
	s := models.Section{K: m.K, D: m.D}
	comp := models.Labels("component ", m.K)
	s.Bars("Component weights", "", comp, m.Weights)
	if m.IsDiag() {
		s.Heat("Component variances σ²", "Diagonal: one row per component, one column per dimension.", comp, models.Labels("x", m.D), m.Diag, false)
	} else {
		s.Bars("Component variances σ²", "Spherical: each component's variance per dimension.", comp, m.Variances)
	}
	s.Heat("Component means", "One row per component, one column per dimension.", comp, models.Labels("x", m.D), m.Means, true)
	if f := m.Fit; f != nil {
		s.DenseFit(f.Rows, m.D, f.Passes, f.Solver, f.Seconds, f.Convergence)
		s.Fact("second moment", f.Method)
		s.Fact("differing variances", strconv.FormatBool(f.Differing))
		s.Fact("σ² (common)", models.FormatNum(f.Sigma2))
		s.Fact("Σ weights before normalising", models.FormatNum(f.WeightSum))
		if f.EM != nil {
			s.Fact("EM passes", strings.TrimPrefix(emSummary(f.EM), ", then "))
		}
	}
	return s
}

// gmmPasses are the passes of a fit, for help texts.
const gmmPasses = `exact (d ≤ --exact-dim, default 512): 2 passes, first and second
moments, then the whitened third moment; an --append to pass 2 with --basis
the updated merged pass 1 checks the drift of the whitening against
--drift-tol (beyond it, recompute pass 2). Sketched (d > --exact-dim): pass 1
sketches the second moment with the Ω of --seed and --oversample, then
1 + --power-iters (default 2) passes each carry the range basis of the merged
pass before, the last the whitened third moment; only pass 1 can be
appended to.`
