package multiview

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// Kind is the three-view mixture in the model registry (models/all
// registers it).
var Kind = &models.DenseKind[Config, *Model]{
	KindName: "multiview",
	About:    "multi-view mixture: three views given as column groups (--views) or an equal split",
	Flags: func(fs *flag.FlagSet, c *Config, _ models.Use) func(*Config, models.Check) error {
		views := fs.String("views", "", `column groups of the three views, e.g. "0,1,2;3,4;5,6" (default: an equal split), or "rotate": a seeded random rotation of the rows, then the equal split (004 Prop 3.3)`)
		fs.BoolVar(&c.RandomViews, "random-views", false, "a seeded random split of the columns into three views (mixtures of product distributions)")
		return func(c *Config, _ models.Check) error {
			vs, rotate, err := ParseViews(*views)
			if err != nil {
				return fmt.Errorf("--views: %w", err)
			}
			c.Views, c.Rotate = vs, rotate
			return nil
		}
	},
	Common: func(c *Config, m models.Common) {
		m.Apply(&c.K, &c.Seed, &c.Solver, &c.Restarts, &c.Iters, &c.Workers)
	},
	Passes: func(c Config) models.Passes {
		return models.Passes{Plan: func(path string) implicit.Planner { return (&Plan{Config: c, Path: path}).Planner() }, MaxPasses: 2, About: multiviewPasses}
	},
	Fit:       Fit,
	FitStats:  FitStats,
	ReadModel: Read,
	Gen: &models.Gen[synth.MultiViewConfig]{
		GenName:   "multiview",
		AboutText: "Draws a dense sample table from a mixture of three conditionally independent views and writes it as Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>), with the model in a JSON truth file.",
		Config:    synth.MultiViewConfig{Rows: 100000, Dims: [3]int{4, 4, 4}, K: 5, Seed: 1},
		Bind: func(fs *flag.FlagSet, c *synth.MultiViewConfig) {
			models.GenFlags{Seed: &c.Seed, K: &c.K, Rows: &c.Rows, Sigma2: &c.Sigma2}.Bind(fs)
			fs.Func("dims", "widths of the three views (default 4,4,4)", func(s string) error {
				if _, err := fmt.Sscanf(s, "%d,%d,%d", &c.Dims[0], &c.Dims[1], &c.Dims[2]); err != nil {
					return fmt.Errorf("want three widths like 4,5,6")
				}
				return nil
			})
		},
		Draw: func(c synth.MultiViewConfig) (models.TruthWriter, error) {
			return models.Drawn(func(g *synth.MultiView) (any, map[string]any) { return TruthOf(g), g.Params })(synth.NewMultiView(c))
		},
	},
}

// TruthOf returns the mixture the rows of g are drawn from, as a fit
// returns it.
func TruthOf(g *synth.MultiView) *Model {
	t := g.Truth
	return &Model{Model: "multiview", K: t.K, D: t.D, Views: t.Views, Weights: t.Weights, Means: t.Means}
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

// Section implements models.Reported: the weights and each view's means.
func (m *Model) Section() models.Section {
	s := models.Section{K: m.K, D: m.D}
	comp := models.Labels("component ", m.K)
	s.Bars("Component weights", "", comp, m.Weights)
	for t, means := range m.Means {
		cols := make([]string, len(m.Views[t]))
		for i, c := range m.Views[t] {
			cols[i] = "x" + strconv.Itoa(c)
		}
		note := "Row i is E[view | component i]."
		if m.Rotated {
			note += " In rotated coordinates."
		}
		s.Heat(fmt.Sprintf("Means of view %d", t+1), note, comp, cols, means, true)
	}
	if f := m.Fit; f != nil {
		s.DenseFit(f.Rows, m.D, f.Passes, f.Solver, f.Seconds, f.Convergence)
		s.Fact("Σ weights before normalising", models.FormatNum(f.WeightSum))
	}
	return s
}

// multiviewPasses are the passes of a fit, for help texts.
const multiviewPasses = `2 passes: pass 1 (cross moments of the views) can always be appended to;
pass 2 (whitened third moment) takes the merged pass 1 and cannot be
appended to (the recovery uses pass 1's cross moments of exactly its rows):
recompute it.`
