package hmm

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// Kind is the hidden Markov model of sequences in the model registry
// (models/all registers it).
var Kind = &models.DenseKind[Config, *Model]{
	KindName: "hmm",
	About:    "hidden Markov model from sequences: one row per time step, sequence id in --group-column",
	Flags: func(fs *flag.FlagSet, c *Config, use models.Use) func(*Config, models.Check) error {
		fs.BoolVar(&c.Windows, "windows", false, "use every window of three steps, not only the first three of each sequence")
		if use == models.FitFlags {
			fs.BoolVar(&c.Discrete, "discrete", false, "observations are one-hot symbols (project O's columns onto the simplex)")
			emFlags(fs, c)
			covarianceFlag(fs, c)
		}
		return func(c *Config, ck models.Check) error {
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
		return models.Passes{Plan: func(path string) implicit.Planner { return (&Plan{Config: c, Path: path}).Planner() }, Group: "sequence", MaxPasses: 2, About: hmmPasses}
	},
	Fit:       Fit,
	FitStats:  FitStats,
	ReadModel: Read,
	Score:     LogLikelihood,
	Infer:     &models.RowInference[*Model]{Rows: Posteriors, Shape: (*Model).dims},
	Gen: &models.Gen[synth.HMMSeqConfig]{
		GenName:   "hmm",
		AboutText: "Draws sequences from a hidden Markov model and writes them as a dense sample table, Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>, plus an int64 group column of sequence ids), with the model in a JSON truth file.",
		Config:    synth.HMMSeqConfig{Seqs: 20000, Len: 10, D: 20, K: 5, Seed: 1},
		Bind: func(fs *flag.FlagSet, c *synth.HMMSeqConfig) {
			models.GenFlags{Seed: &c.Seed, K: &c.K, D: &c.D, Sigma2: &c.Sigma2}.Bind(fs)
			fs.Int64Var(&c.Seqs, "seqs", c.Seqs, "number of sequences")
			fs.IntVar(&c.Len, "len", c.Len, "steps per sequence")
			fs.BoolVar(&c.Discrete, "discrete", false, "one-hot observation symbols instead of Gaussian vectors")
		},
		Draw: func(c synth.HMMSeqConfig) (models.TruthWriter, error) {
			return models.Drawn(func(g *synth.HMMSeq) (any, map[string]any) { return TruthOf(g), g.Params })(synth.NewHMMSeq(c))
		},
	},
}

// TruthOf returns the model the sequences of g are drawn from, as a fit
// returns it.
func TruthOf(g *synth.HMMSeq) *Model {
	t := g.Truth
	return &Model{Model: "hmm", K: t.K, D: t.D, Pi: t.Pi, T: t.T, O: t.O}
}

// Summary implements models.Fitted.
func (m *Model) Summary() string { return fmt.Sprintf("k=%d", m.K) + emSummary(m.Fit) }

// Warnings implements models.Fitted.
func (m *Model) Warnings() []string { return models.RecordWarnings(m.Fit) }

// ClearTiming implements models.Fitted.
func (m *Model) ClearTiming() { models.ClearRecordTiming(m.Fit) }

// Shared implements models.Record.
func (f *FitRecord) Shared() (*models.Convergence, *float64) { return &f.Convergence, &f.Seconds }

// Eval implements models.Evaluator (Eval).
func (m *Model) Eval(truth models.Fitted) (any, error) { return models.EvalAs(m, truth, Eval) }

// Section implements models.Reported: T, π and the observation means.
func (m *Model) Section() models.Section {
	s := models.Section{K: m.K, D: m.D}
	states := models.Labels("state ", m.K)
	s.Transition("T", "Transition matrix", m.T, states)
	s.Bars("Initial distribution π", "", states, m.Pi)
	s.Heat("Observation means O", "Row j is E[x | state j].", states, models.Labels("x", m.D), m.O, true)
	if m.Var != nil {
		s.Bars("Variances σ²", "Each state's variance per coordinate: x | state j is N(O[j], σ²ⱼI).", states, m.Var)
	}
	if m.VarDiag != nil {
		s.Heat("Variances σ²", "Diagonal: one row per state, one column per coordinate; x | state j is N(O[j], diag(σ²ⱼ)).", states, models.Labels("x", m.D), m.VarDiag, false)
	}
	if f := m.Fit; f != nil {
		s.DenseFit(f.Rows, m.D, f.Passes, f.Solver, f.Seconds, f.Convergence)
		s.Fact("sequences", strconv.FormatInt(f.Sequences, 10))
		s.Fact("ℓ1 moved by simplex projections", models.FormatNum(f.Projected))
		if f.EM != nil {
			s.Fact("Baum–Welch passes", strings.TrimPrefix(emSummary(f), ", then "))
		}
	}
	return s
}

// hmmPasses are the passes of a fit, for help texts.
const hmmPasses = `2 passes over the triples of consecutive steps, read in order: pass 1
(cross moments) can always be appended to; pass 2 (whitened third moment)
takes the merged pass 1 and cannot be appended to: recompute it. A shard
owns every sequence whose first row it selects, and reads on to its end.`
