package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// toyName is the name of a model made up for TestRegisteredModel: the
// column means of dense rows, scaled by its own setting, in one pass.
const toyName = "toy-mean"

// toyConfig are the toy model's settings.
type toyConfig struct {
	Scale   float64
	Workers int
}

// toyModel is a fitted toy model (or its truth).
type toyModel struct {
	Model string    `json:"model"`
	D     int       `json:"d"`
	Mean  []float64 `json:"mean"`
	Rows  int64     `json:"rows,omitempty"`
}

func (m *toyModel) Write(path string) error { return models.WriteJSON(path, m) }
func (m *toyModel) Summary() string         { return fmt.Sprintf("the means of %d columns", m.D) }
func (m *toyModel) Warnings() []string      { return nil }
func (m *toyModel) ClearTiming()            {}

func (m *toyModel) Eval(truth models.Fitted) (any, error) {
	return models.EvalAs(m, truth, func(fit, truth *toyModel) (map[string]float64, error) {
		var l1 float64
		for j := range fit.Mean {
			l1 += math.Abs(fit.Mean[j] - truth.Mean[j])
		}
		return map[string]float64{"mean_l1": l1}, nil
	})
}

func (m *toyModel) Section() models.Section {
	s := models.Section{K: 1, D: m.D}
	s.Bars("Column means", "", models.Labels("x", m.D), m.Mean)
	s.Fact("rows", fmt.Sprint(m.Rows))
	return s
}

// toyPlan is the toy model's one pass: the column sums.
type toyPlan struct{ cfg toyConfig }

func (p toyPlan) First(d int) (*implicit.Pass, error) {
	params, _ := json.Marshal(p.cfg.Scale)
	return &implicit.Pass{
		Header: statsfile.Header{Model: toyName, Phase: 1, D: d, K: 1, Cols: 1, Params: params},
		Sums:   []implicit.SumShape{{Name: "sum", Len: d}},
		Worker: func() implicit.BatchFunc {
			return func(b *stream.Dense, out [][]float64, _ func() error) error {
				for i, v := range b.Data[:b.Rows*b.Cols] {
					out[0][i%b.Cols] += v
				}
				return nil
			}
		},
	}, nil
}

func (p toyPlan) Next(context.Context, *implicit.DenseStats) (*implicit.Pass, error) { return nil, nil }

func (p toyPlan) Like(_ context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	return p.First(st.Header.D)
}

func toyFitStats(_ context.Context, st *implicit.DenseStats, c toyConfig) (*toyModel, error) {
	var scale float64
	if err := json.Unmarshal(st.Header.Params, &scale); err != nil {
		return nil, err
	}
	m := &toyModel{Model: toyName, D: st.Header.D, Rows: st.Rows}
	for _, s := range st.Sum("sum") {
		m.Mean = append(m.Mean, scale*s/float64(st.Rows))
	}
	return m, nil
}

var toyKind = &models.DenseKind[toyConfig, *toyModel]{
	KindName: toyName,
	About:    "column means of dense rows (a model of the registry's test)",
	Flags: func(fs *flag.FlagSet, c *toyConfig, _ models.Use) func(*toyConfig, models.Check) error {
		fs.Float64Var(&c.Scale, "scale", 1, "factor of the means")
		return nil
	},
	Common: func(c *toyConfig, m models.Common) { m.Apply(nil, nil, nil, nil, nil, &c.Workers) },
	Passes: func(c toyConfig) models.Passes {
		return models.Passes{Plan: func(string) implicit.Planner { return toyPlan{c} }, MaxPasses: 1, About: "1 pass: the column sums."}
	},
	Fit: func(ctx context.Context, src stream.DenseSource, c toyConfig) (*toyModel, error) {
		return implicit.FitPlan(ctx, src, toyPlan{c}, c.Workers, func(ctx context.Context, st *implicit.DenseStats) (*toyModel, error) {
			return toyFitStats(ctx, st, c)
		})
	},
	FitStats: toyFitStats,
	ReadModel: func(path string) (*toyModel, error) {
		return models.ReadJSON(path, "a toy model", func(*toyModel) error { return nil })
	},
}

var registerToy sync.Once

// TestRegisteredModel registers a model the commands have never heard of
// and checks that fit (its flags only, from rows and from statistics),
// stats, merge, eval and report serve it, with no other change.
func TestRegisteredModel(t *testing.T) {
	registerToy.Do(func() { models.Register(toyKind) })
	p := tempPaths(t)
	in := p("rows.parquet")
	mustRun(t, "gen", "gmm", "--rows", "900", "--d", "3", "--k", "2", "--row-group", "300", "--out", in, "--progress", "off")

	if _, _, help := streamfit(t, "fit", toyName, "-h"); !strings.Contains(help, "-scale") || strings.Contains(help, "-differing") {
		t.Errorf("fit %s -h lists other flags than the model's:\n%s", toyName, help)
	}
	if _, _, usage := streamfit(t, "fit"); !strings.Contains(usage, toyName) {
		t.Errorf("fit without a model does not list %s:\n%s", toyName, usage)
	}
	mustRun(t, "fit", toyName, "--input", in, "--scale", "2", "--no-timing", "--progress", "off", "--out", p("fit.json"))
	mustRun(t, "stats", toyName, "--scale", "2", "--row-groups", "0:1", "--out", p("a.stats"), "--progress", "off", in)
	mustRun(t, "stats", toyName, "--scale", "2", "--row-groups", "1:", "--out", p("b.stats"), "--progress", "off", in)
	mustRun(t, "merge", "--out", p("all.stats"), p("a.stats"), p("b.stats"))
	mustRun(t, "fit", toyName, "--from-stats", p("all.stats"), "--no-timing", "--out", p("stats.json"))
	if a, b := readFile(t, p("fit.json")), readFile(t, p("stats.json")); string(a) != string(b) {
		t.Errorf("the fit from merged statistics differs from the fit:\n%s\n%s", a, b)
	}
	var fit toyModel
	if err := json.Unmarshal(readFile(t, p("fit.json")), &fit); err != nil || fit.Rows != 900 || len(fit.Mean) != 3 {
		t.Fatalf("the fitted model: %+v, %v", fit, err)
	}

	truth := toyModel{Model: toyName, D: 3, Mean: []float64{fit.Mean[0], fit.Mean[1], fit.Mean[2] + 0.5}}
	if err := truth.Write(p("truth.json")); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "eval", "--model", p("fit.json"), "--truth", p("truth.json"), "--json")
	var ev struct {
		MeanL1 float64 `json:"mean_l1"`
		Model  string  `json:"model_sha256"`
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || math.Abs(ev.MeanL1-0.5) > 1e-12 || ev.Model == "" {
		t.Errorf("eval: %s (%v), want mean_l1 0.5 and the model's SHA-256", out, err)
	}
	mustRun(t, "report", "--model", p("fit.json"), "--out", p("report.html"))
	if page, err := os.ReadFile(p("report.html")); err != nil || !strings.Contains(string(page), "Column means") {
		t.Errorf("the report does not show the model's section (%v)", err)
	}
}
