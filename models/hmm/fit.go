package hmm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// ErrShort reports a sequence with fewer than three steps.
var ErrShort = errors.New("hmm: sequence shorter than 3 steps")

// Config sets up a fit. The zero value plus K uses the first three steps of
// every sequence and projects T and π onto the simplex.
type Config struct {
	// K is the number of hidden states, at least 1. The moments give at
	// most d (the columns), and fewer when the cross moments of consecutive
	// steps support fewer; the moment fit then has that many, with a
	// warning, and Baum–Welch (EM) starts the others as copies of them.
	K int
	// Windows uses every window of three consecutive steps instead of only
	// the first three of each sequence: far more triples per sequence, valid
	// for O and T whenever the chain is time-homogeneous; π then estimates the
	// time-averaged state distribution of the window starts (exactly the
	// initial one when the chain starts stationary).
	Windows bool
	// Discrete projects the columns of O onto the simplex too (one-hot data).
	Discrete bool
	// NoProject keeps the raw estimates of T and π (no simplex projection).
	NoProject bool
	// Solver names the symmetric solver (solver.ByName; default "rtpm").
	Solver string
	// Restarts and Iters tune the solver (0 selects its defaults).
	Restarts, Iters int
	// Seed fixes every random choice.
	Seed uint64
	// Workers is the number of goroutines of the Baum–Welch passes read
	// from memory (BWConfig.Workers; default 1); the model does not
	// depend on it.
	Workers int
	// EM, when set, refines the moment fit by Baum–Welch passes over the
	// sequences (Start, then Refine): of one-hot symbols when Discrete,
	// else of a Gaussian per state, N(x; O[j], Var[j]·I) (with EM.Diag
	// N(x; O[j], diag(VarDiag[j]))), whose variances a first pass starts
	// (GaussianStartPass) and the model records. nil:
	// the moment fit alone. DefaultConfig sets it.
	EM *BWConfig
}

// blockTriples is the number of triples handed to the accumulators at once.
const blockTriples = 1024

// Fit learns an HMM of cfg.K states from sequences in src (two ordered
// passes), or of as many as the moments give when they give fewer (see
// FitStats).
//
// With cfg.EM set, Baum–Welch passes follow (see Config.EM), from the
// states the moments give and copies of them up to cfg.K.
func Fit(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	if cfg.EM != nil {
		return fitBW(ctx, src, cfg)
	}
	start := time.Now()
	info := src.Info()
	d := info.Cols
	if d <= 0 {
		return nil, fmt.Errorf("hmm: the source does not report its number of columns")
	}
	if cfg.K < 1 {
		return nil, fmt.Errorf("hmm: k=%d, need at least one state", cfg.K)
	}
	return models.FitPlan(ctx, src, (&Plan{Config: cfg, Path: info.Path}).Planner(), 1, cfg, FitStats, start, (*Model).seconds)
}

// FitStats fits the HMM from the merged pass-2 statistics of Plan; the
// settings the statistics fix (K, Windows) are taken from them, the
// solver's and the recovery's from cfg. The model has the states the
// carried pass-1 totals support, cfg.K or fewer, with a warning when
// fewer.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	cfg, err := ConfigFromStats(cfg, st.Header)
	if err != nil {
		return nil, err
	}
	d := st.Header.D
	tp, err := (&Plan{Config: cfg}).triplePlan(d)
	if err != nil {
		return nil, err
	}
	dec, err := tp.DecomposeStats(ctx, st, multiview.Options{K: cfg.K, Solver: cfg.Solver, Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Workers: 1})
	if err != nil {
		return nil, fmt.Errorf("hmm: %w", err)
	}
	k := len(dec.Weights)
	rows, seqs := st.Rows, int64(st.Sum("groups")[0])
	o, ot := dec.Means[1], dec.Means[2]
	var t mat.Dense
	if err := t.Solve(o, ot); err != nil { // least squares: O⁺(OT)
		return nil, fmt.Errorf("hmm: recovering T: %w", err)
	}
	var pi mat.VecDense
	if err := pi.SolveVec(&t, mat.NewVecDense(k, append([]float64(nil), dec.Weights...))); err != nil {
		return nil, fmt.Errorf("hmm: recovering π (T is singular): %w", err)
	}
	m := &Model{Model: "hmm", K: k, D: d, O: make([][]float64, k), T: make([][]float64, k), Pi: pi.RawVector().Data}
	ms := &FitRecord{Rows: rows, Sequences: seqs, Triples: dec.N, Passes: 2, Solver: cfg.Solver, Whitening: dec.Whitening, Lambda: dec.Lambda, W: dec.Weights}
	ms.Record("", dec.Result)
	if ms.Solver == "" {
		ms.Solver = "rtpm"
	}
	if k < cfg.K {
		ms.Warnings = append(ms.Warnings, fewerStates(cfg.K, k, d, cfg.Discrete)+fmt.Sprintf("; the model has %d", k))
	}
	for j := range k {
		m.O[j] = mat.Col(nil, j, o)
		m.T[j] = make([]float64, k)
	}
	if !cfg.NoProject {
		for j := range k {
			col := mat.Col(nil, j, &t)
			ms.Projected += models.ProjectSimplex(col)
			t.SetCol(j, col)
			if cfg.Discrete {
				ms.Projected += models.ProjectSimplex(m.O[j])
			}
		}
		ms.Projected += models.ProjectSimplex(m.Pi)
	}
	for i := range k {
		for j := range k {
			m.T[i][j] = t.At(i, j)
		}
	}
	m.Fit = ms
	return m, nil
}

// fewerStates says that the moments of rows of d columns (symbols when
// discrete) gave got of the asked states, and why; a warning begins with
// it.
func fewerStates(asked, got, d int, discrete bool) string {
	width := fmt.Sprintf("the dimension d=%d", d)
	if discrete {
		width = fmt.Sprintf("the d=%d symbols", d)
	}
	var why string
	switch {
	case asked > d && got == d:
		why = fmt.Sprintf("k=%d exceeds %s", asked, width)
	case asked > d:
		why = fmt.Sprintf("k=%d exceeds %s, and the cross moments of consecutive steps support only %d", asked, width, got)
	default:
		why = fmt.Sprintf("the cross moments of consecutive steps support only %d, as when states share a mean observation", got)
	}
	return fmt.Sprintf("the moments give %d of the %d states (%s)", got, asked, why)
}
