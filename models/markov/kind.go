package markov

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// The names of the two models of snapshots: the files of a chain's fit and
// of an HMM's say which they hold.
const (
	chainName = "markov"
	hmmName   = "hmm-snapshot"
)

// ChainKind is the Markov chain from snapshots in the model registry, and
// HMMKind the HMM from snapshots (models/all registers both).
var (
	ChainKind = snapshotKind(chainName, "Markov chain from unordered snapshots: one-hot rows grouped into sets by --group-column", FitChain)
	HMMKind   = snapshotKind(hmmName, "HMM from unordered snapshots: observation rows grouped into sets by --group-column", FitHMM)
)

// snapshotKind is the kind of the model name fitted from snapshot sets by
// fit.
func snapshotKind(name, about string, fit func(context.Context, stream.DenseSource, Config) (*Model, error)) *models.DenseKind[Config, *Model] {
	chain := name == chainName
	k := &models.DenseKind[Config, *Model]{
		KindName: name,
		About:    about,
		Flags: func(fs *flag.FlagSet, c *Config, use models.Use) func(*Config, models.Check) error {
			fs.Float64Var(&c.Alpha0, "alpha0", 1, "Dirichlet concentration α₀ of the set mixture, > 0")
			if use == models.FitFlags {
				fs.Float64Var(&c.R, "r", 0, "the snapshot rate r (0: find it by the projection-distance scan)")
			}
			if !chain {
				fs.Float64Var(&c.Sigma2, "sigma2", 0, "observation noise variance (0: estimate it; negative is an error)")
				fs.BoolVar(&c.Discrete, "discrete", false, "observations are one-hot symbols (checked): the fit gives UT, each state's symbol probabilities (smoothed) as U, and P = I, all that such snapshots determine")
			}
			return checkFlags
		},
		Common: func(c *Config, m models.Common) {
			m.Apply(&c.K, &c.Seed, &c.Solver, &c.Restarts, &c.Iters, &c.Workers)
		},
		Passes: func(c Config) models.Passes {
			return models.Passes{Plan: func(path string) implicit.Planner { return &Plan{Config: c, Path: path, Chain: chain} }, Group: "set", MaxPasses: 2, About: snapshotPasses}
		},
		Fit:       fit,
		FitStats:  FitStats,
		ReadModel: Read,
	}
	if chain {
		k.Gen = snapshots
	}
	return k
}

// checkFlags refuses, as the flags that set them, settings the fit reads
// otherwise as "use the default".
func checkFlags(c *Config, _ models.Check) error {
	switch {
	case c.Sigma2 < 0:
		return fmt.Errorf("--sigma2=%g: a variance cannot be negative (0 estimates it)", c.Sigma2)
	case !(c.Alpha0 > 0):
		return fmt.Errorf("--alpha0=%g: the Dirichlet concentration of the set proportions must be positive (001 §4 uses 1)", c.Alpha0)
	case c.R < 0 || c.R > 1:
		return fmt.Errorf("--r=%g: the snapshot rate must be in (0, 1] (0 scans for it)", c.R)
	case c.Discrete && c.Sigma2 != 0:
		return fmt.Errorf("--sigma2=%g with --discrete: one-hot symbols have no Gaussian noise", c.Sigma2)
	}
	return nil
}

// snapshots is the generator of snapshot sets of a chain (--m 0) or of an
// HMM, whose truth is a model of either kind.
var snapshots = &models.Gen[synth.SnapshotConfig]{
	GenName:   "snapshots",
	AboutText: "Draws unordered snapshot sets of a Markov chain (or, with --m, of an HMM) and writes them as a dense sample table, Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>, plus an int64 group column of set ids), with the model in a JSON truth file.",
	Config:    synth.SnapshotConfig{Sets: 1000, PerSet: 1000, K: 5, Alpha0: 1, R: 0.3, Family: "stay", Seed: 1},
	Bind: func(fs *flag.FlagSet, c *synth.SnapshotConfig) {
		models.GenFlags{Seed: &c.Seed, K: &c.K, Sigma2: &c.Sigma2}.Bind(fs)
		fs.Int64Var(&c.Sets, "sets", c.Sets, "number of sets N")
		fs.IntVar(&c.PerSet, "per-set", c.PerSet, "points per set n")
		fs.IntVar(&c.M, "m", 0, "observation dimension of the HMM (0: the chain itself, one-hot rows)")
		fs.Float64Var(&c.Alpha0, "alpha0", c.Alpha0, "α₀")
		fs.Float64Var(&c.R, "r", c.R, "snapshot rate r")
		fs.Func("p", `the transition matrix: a family, "stay" (βI + (1−β)Q, slowly mixing) or "flip" (states 0 and 1 swap, an eigenvalue near −0.6: a pole in the r scan; k ≥ 3), or a column-stochastic k×k matrix as JSON rows (P[i][j] = Pr(i | j)), inline or in a file (default stay)`, func(s string) error {
			var err error
			c.Family, c.P, err = ParseP(s)
			return err
		})
	},
	Draw: func(c synth.SnapshotConfig) (models.TruthWriter, error) {
		return models.Drawn(func(g *synth.Snapshots) (any, map[string]any) { return TruthOf(g), g.Params })(synth.NewSnapshots(c))
	},
}

// TruthOf returns the chain (or HMM) the snapshots of g are drawn from, as
// a fit returns it.
func TruthOf(g *synth.Snapshots) *Model {
	t := g.Truth
	m := &Model{Model: chainName, K: t.K, D: t.D, Alpha0: t.Alpha0, R: t.R, Pi: t.Pi, P: t.P, T: t.T, U: t.U, UT: t.UT}
	if t.HMM {
		m.Model, m.Sigma2 = hmmName, t.Sigma2
	}
	return m
}

// Summary implements models.Fitted.
func (m *Model) Summary() string {
	if m.Fit == nil {
		return fmt.Sprintf("%d states, r=%.3g", m.K, m.R)
	}
	how := "given"
	if m.Fit.RScanned {
		how = "scanned"
	}
	if m.Discrete {
		how = "one-hot symbols: P = I, the snapshots determine only UT"
	}
	return fmt.Sprintf("%d states, r=%.3g (%s), from %d sets (%d rows), %d passes", m.K, m.R, how, m.Fit.Sets, m.Fit.Rows, m.Fit.Passes)
}

// Warnings implements models.Fitted.
func (m *Model) Warnings() []string { return models.RecordWarnings(m.Fit) }

// ClearTiming implements models.Fitted.
func (m *Model) ClearTiming() { models.ClearRecordTiming(m.Fit) }

// Shared implements models.Record.
func (f *FitRecord) Shared() (*models.Convergence, *float64) { return &f.Convergence, &f.Seconds }

// Eval implements models.Evaluator (Eval).
func (m *Model) Eval(truth models.Fitted) (any, error) { return models.EvalAs(m, truth, Eval) }

// ParseP reads a transition matrix given as text (a generator's --p): the
// name of a chain family ("stay", "flip"), or a column-stochastic matrix as
// JSON rows given inline ("[[...],...]") or in the file s names.
func ParseP(s string) (family string, p [][]float64, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "stay" || s == "flip":
		return s, nil, nil
	case strings.HasPrefix(s, "["):
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return "", nil, fmt.Errorf("not a JSON matrix: %w", err)
		}
		return "", p, nil
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return "", nil, fmt.Errorf("%q: not a family (stay, flip), an inline JSON matrix, or a readable file: %w", s, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", nil, fmt.Errorf("%s: not a JSON matrix: %w", s, err)
	}
	return "", p, nil
}

// Section implements models.Reported: P, the weights, T, U and the scan of
// the snapshot rate.
func (m *Model) Section() models.Section {
	s := models.Section{K: m.K, D: m.D}
	states := models.Labels("state ", m.K)
	s.Transition("P", "Transition matrix", m.P, states)
	s.Bars("State weights π", "", states, m.Pi)
	if len(m.T) > 0 {
		s.Heat("Snapshot transition matrix T", "T[i][j], column-stochastic like P.", states, states, m.T, false)
	}
	if len(m.U) > 0 {
		s.Heat("Observation means U", "Row i is the column Uᵢ: the mean observation of state i.", states, models.Labels("x", len(m.U[0])), m.U, true)
	}
	if len(m.Scan) > 0 {
		r, dist := make([]string, len(m.Scan)), make([]float64, len(m.Scan))
		for i, p := range m.Scan {
			r[i], dist[i] = models.FormatNum(p.R), p.Dist
		}
		s.Bars("Snapshot rate scan", "Projection distance of P(r) at each r tried; the fit chose r = "+models.FormatNum(m.R)+".", r, dist)
	}
	s.Fact("α₀", models.FormatNum(m.Alpha0))
	s.Fact("snapshot rate r", models.FormatNum(m.R))
	if f := m.Fit; f != nil {
		s.DenseFit(f.Rows, m.D, f.Passes, f.Solver, f.Seconds, f.Convergence)
		s.Fact("sets", strconv.FormatInt(f.Sets, 10))
		s.Fact("pairing cost", models.FormatNum(f.PairingCost))
	}
	return s
}

// snapshotPasses are the passes of a fit, for help texts.
const snapshotPasses = `2 passes over the snapshot sets, read in order: pass 1 (point and
within-set pair moments) can always be appended to; pass 2 (whitened
within-set third moment) takes the merged pass 1 and cannot be appended to:
recompute it. A shard owns every set whose first row it selects, and reads
on to its end.`
