package markov

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// whitening holds W (d×k, WᵀM2W = I) and B = (Wᵀ)⁺.
type whitening struct {
	w, b *mat.Dense
	vals []float64
}

// whiten whitens m2 on its k leading eigenvectors, or fails when fewer
// than k eigenvalues are positive.
func whiten(m2 *mat.SymDense, k int, what string) (*whitening, error) {
	s, err := spectrumOf(m2, what)
	if err != nil {
		return nil, err
	}
	if j := s.positive(0); j < k {
		return nil, fmt.Errorf("markov: %s has only %d positive eigenvalues, k=%d (k too large or too few sets)", what, j, k)
	}
	return s.whiten(k, 0), nil
}

func tvec(w *mat.Dense, x []float64) []float64 {
	_, k := w.Dims()
	var out mat.VecDense
	out.MulVec(w.T(), mat.NewVecDense(len(x), x))
	r := make([]float64, k)
	copy(r, out.RawVector().Data)
	return r
}

// setTensor forms the whitened 001 M3 (Thm 1) / M3' (Thm 3) from the set
// triples: (α0+2)(α0+1)/2·C3 − (α0+1)α0/2·Sym3(V1, C2) + α0²V1^⊗3.
func setTensor(c3 *solver.Sym3, wh *whitening, ps *pairStats, a0 float64) *solver.Sym3 {
	_, k := wh.w.Dims()
	t := solver.NewSym3(k)
	t.AddTensor(c3)
	t.Scale((a0 + 2) * (a0 + 1) / 2)
	v := tvec(wh.w, ps.v1)
	var c2w mat.Dense
	c2w.Product(wh.w.T(), ps.c2, wh.w)
	addSym(t, v, c2w.RawMatrix().Data, -(a0+1)*a0/2)
	addCubes(t, v, 1, []float64{a0 * a0})
	t.Invalidate()
	return t
}

// components decomposes a whitened tensor: columns λᵢBvᵢ and weights λᵢ⁻²,
// sorted by decreasing weight (001 matches the two decompositions and the
// state labels by this order).
func components(ctx context.Context, t *solver.Sym3, wh *whitening, k int, cfg *Config, conv *models.Convergence, what string) (cols [][]float64, wts, lam []float64, err error) {
	solve, err := solver.ByName(cfg.Solver)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("markov: %w", err)
	}
	res, err := solve(ctx, t, k, solver.Options{Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("markov: %w", err)
	}
	conv.Record(what, res)
	d, _ := wh.b.Dims()
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return res.Weights[order[a]] < res.Weights[order[b]] })
	for _, i := range order {
		l := res.Weights[i]
		var c mat.VecDense
		c.MulVec(wh.b, res.Factors.ColView(i))
		c.ScaleVec(l, &c)
		col := make([]float64, d)
		copy(col, c.RawVector().Data)
		cols = append(cols, col)
		wts = append(wts, 1/(l*l))
		lam = append(lam, l)
	}
	return cols, wts, lam, nil
}

// FitHMM learns an HMM with K hidden states and spherical noise from
// snapshot sets (001 Alg. 1): two passes over src.
//
// The moments give a state for each direction of M2' (and of M2 = V2 − σ²I)
// larger than the magnitude of the matrix's most negative eigenvalue, a
// noise level; at most d. When they give c < K, the fit recovers those c
// and adds K − c copies of the most likely states (a copy has its
// original's U, UT and outgoing transitions, and shares its start and
// entering probabilities), so the distribution of every snapshot and set is
// the c-state model's; it warns and records c in Fit.States. Real data that
// departs from the model gets the best answer the moments hold, not a
// refusal; the fit fails only when not one state can be given.
//
// With cfg.Discrete the rows are one-hot symbols, whose snapshots
// determine U and P only through UT: the fit gives UT, P = I, r = 1 (unless
// given), and as U each state's symbol probabilities, UT's column projected
// onto the simplex and add-one smoothed against the state's expected rows,
// so every symbol has a positive probability.
func FitHMM(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	start := time.Now()
	cfg.defaults()
	d := src.Info().Cols
	k := cfg.K
	if err := check(d, k, &cfg); err != nil {
		return nil, err
	}
	return models.FitPlan(ctx, src, &Plan{Config: cfg, Path: src.Info().Path}, cfg.Workers, cfg, FitStats, start, (*Model).seconds)
}

// fitHMM recovers the HMM from the two passes' statistics and the
// whitenings of pass 2: as many states as the moments give, then copies of
// the most likely ones up to cfg.K, with a warning (withCopies).
func fitHMM(ctx context.Context, ps *pairStats, ts *tripleStats, wh *hmmWhitenings, cfg Config) (*Model, error) {
	if ts.rows != ps.rows {
		return nil, fmt.Errorf("markov: the source changed between passes (%d rows, then %d)", ps.rows, ts.rows)
	}
	c := wh.states
	fit := fitGaussian
	if cfg.Discrete {
		fit = fitDiscrete
	}
	m, err := fit(ctx, ps, ts, wh, cfg)
	if err != nil {
		return nil, err
	}
	m.Fit.States = c
	if c < cfg.K {
		withCopies(m, cfg.K)
		m.Fit.Warnings = append(m.Fit.Warnings, fmt.Sprintf("the moments give %d of the k=%d states (%s); the other %d are copies of the most likely states, each sharing its original's start and entering probabilities, so the model's distribution of snapshots and sets is the %d-state one, which k=%d gives without copies; more sets, or a likelihood refinement that separates the copies, would do better", c, cfg.K, wh.shortWhy, cfg.K-c, c, c))
	}
	if !cfg.Discrete && looksOneHot(ps) {
		m.Fit.Warnings = append(m.Fit.Warnings, "the rows are one-hot: their point moments decompose into the symbols, not the states, so U and P are not the model's; --discrete (Config.Discrete) fits what such snapshots determine")
	}
	return m, nil
}

// fitGaussian recovers U and UT from the point and the set tensors, pairs
// them and finds P(r): observations with spherical Gaussian noise.
func fitGaussian(ctx context.Context, ps *pairStats, ts *tripleStats, wh *hmmWhitenings, cfg Config) (*Model, error) {
	d, k := len(ps.v1), wh.states
	whU, whUT, sigma2 := wh.u, wh.ut, wh.sigma2
	// Point tensor: V3 − Sym3(σ²V1, I), whitened (docs/MATH.md §3.6).
	tU := ts.v3
	var wtw mat.Dense
	wtw.Mul(whU.w.T(), whU.w)
	addSym(tU, tvec(whU.w, ps.v1), wtw.RawMatrix().Data, -sigma2)
	tU.Invalidate()
	var conv models.Convergence
	u, pi, lamU, err := components(ctx, tU, whU, k, &cfg, &conv, "the point tensor (U)")
	if err != nil {
		return nil, err
	}
	ut, _, lamUT, err := components(ctx, setTensor(ts.c3, whUT, ps, cfg.Alpha0), whUT, k, &cfg, &conv, "the set tensor (UT)")
	if err != nil {
		return nil, err
	}
	models.ProjectSimplex(pi)
	// Pair the UT columns with the U columns (001 Alg. 1 step 6): both lists
	// come sorted by weight; pairColumns keeps that order unless another
	// pairing makes P(r) far closer to stochastic.
	uM := colsMatrix(u)
	perm, cost := pairColumns(uM, colsMatrix(ut), cfg.R, weightsOf(lamU), weightsOf(lamUT))
	ut, lamUT = permuteSlice(ut, perm), permuteSlice(lamUT, perm)
	utM := colsMatrix(ut)
	m := &Model{Model: hmmName, K: k, D: d, Alpha0: cfg.Alpha0, Pi: pi, U: u, UT: ut, Sigma2: sigma2,
		Fit: &FitRecord{Rows: ps.rows, Sets: ps.sets, Passes: 2, Solver: cfg.Solver, Lambda: lamUT, LambdaU: lamU, Pairing: perm, PairingCost: cost, Convergence: conv}}
	// P(r) = (rU + (1−r)UT)⁺ UT (least squares; 001 Alg. 1 step 7).
	if err := finishP(m, uM, utM, &cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// fitDiscrete is the fit of one-hot rows (Config.Discrete). A point of a
// set whose start proportions are h is symbol s with probability
// (UTh)ₛ: the set distribution depends on U and P only through UT, so
// they cannot be told apart, and the point moments, a diagonal tensor for
// one-hot rows, decompose into the symbols themselves rather than the
// states. The fit takes UT from the set tensor and the model that gives
// every set the same distribution with the fewest assumptions: P = I and
// r = 1 (a snapshot is its set's start state; a given r is kept, P(r) = I
// for every r), U the smoothed emissions of UT (emissions), π the set
// tensor's weights.
func fitDiscrete(ctx context.Context, ps *pairStats, ts *tripleStats, wh *hmmWhitenings, cfg Config) (*Model, error) {
	d, k := len(ps.v1), wh.states
	var conv models.Convergence
	ut, pi, lamUT, err := components(ctx, setTensor(ts.c3, wh.ut, ps, cfg.Alpha0), wh.ut, k, &cfg, &conv, "the set tensor (UT)")
	if err != nil {
		return nil, err
	}
	models.ProjectSimplex(pi)
	r := cfg.R
	if r == 0 {
		r = 1
	}
	pairing := make([]int, k)
	for i := range pairing {
		pairing[i] = i
	}
	return &Model{Model: hmmName, K: k, D: d, Alpha0: cfg.Alpha0, R: r, Pi: pi, P: rowsOf(identity(k)), U: emissions(ut, pi, ps.rows), UT: ut, Discrete: true,
		Fit: &FitRecord{Rows: ps.rows, Sets: ps.sets, Passes: 2, Solver: cfg.Solver, Lambda: lamUT, Pairing: pairing, Convergence: conv}}, nil
}

// FitChain learns a Markov chain over d observed states from snapshot sets
// of one-hot rows (001 Thm 1–2): two passes over src.
func FitChain(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	start := time.Now()
	cfg.defaults()
	d := src.Info().Cols
	if err := check(d, d, &cfg); err != nil {
		return nil, err
	}
	return models.FitPlan(ctx, src, &Plan{Config: cfg, Path: src.Info().Path, Chain: true}, cfg.Workers, cfg, FitStats, start, (*Model).seconds)
}

// chainWhitening whitens the set moment of a chain from the first pass.
func chainWhitening(ps *pairStats, cfg *Config) (*whitening, error) {
	return whiten(setM2(ps, cfg.Alpha0), len(ps.v1), "M2 = (α0+1)C2 − α0ππᵀ")
}

// fitChain recovers the chain from the two passes' statistics.
func fitChain(ctx context.Context, ps *pairStats, ts *tripleStats, cfg Config) (*Model, error) {
	d := len(ps.v1)
	wh, err := chainWhitening(ps, &cfg)
	if err != nil {
		return nil, err
	}
	var conv models.Convergence
	cols, _, lam, err := components(ctx, setTensor(ts.c3, wh, ps, cfg.Alpha0), wh, d, &cfg, &conv, "")
	if err != nil {
		return nil, err
	}
	// Topics and words share labels: the j-th largest weight is the state
	// with the j-th largest mean frequency (001 §3.1 step 4).
	states := make([]int, d)
	for i := range states {
		states[i] = i
	}
	sort.SliceStable(states, func(a, b int) bool { return ps.v1[states[a]] > ps.v1[states[b]] })
	tm := mat.NewDense(d, d, nil)
	lamState := make([]float64, d)
	// E[x] = π exactly (Thm 1), a far better estimate than λ⁻².
	pi := append([]float64(nil), ps.v1...)
	for c, s := range states {
		lamState[s] = lam[c]
		for i := range d {
			tm.Set(i, s, cols[c][i])
		}
	}
	models.ProjectSimplex(pi)
	// Sorting fails when two states have close frequencies; keep the
	// assignment that makes P(r) closest to stochastic (see pairColumns).
	id := identity(d)
	perm, cost := pairColumns(id, tm, cfg.R, pi, weightsOf(lamState))
	tm = permuteCols(tm, perm)
	m := &Model{Model: chainName, K: d, D: d, Alpha0: cfg.Alpha0, Pi: pi, T: rowsOf(tm),
		Fit: &FitRecord{Rows: ps.rows, Sets: ps.sets, Passes: 2, Solver: cfg.Solver, Lambda: permuteSlice(lamState, perm), Pairing: perm, PairingCost: cost, Convergence: conv}}
	// P(r) = (rI + (1−r)T)⁻¹T.
	if err := finishP(m, id, tm, &cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// The row checks of one-hot tables: a chain's, and an HMM's with discrete
// observations.
const (
	chainRows    = "a Markov chain's rows are one-hot states (use hmm-snapshot for real-valued observations)"
	discreteRows = "with --discrete the rows are one-hot symbols (leave it out for real-valued observations)"
)

func check(d, k int, cfg *Config) error {
	switch {
	case d <= 0:
		return errors.New("markov: the source does not report its number of columns")
	case k < 1:
		return fmt.Errorf("markov: k=%d, need at least one state", k)
	case !(cfg.Alpha0 > 0):
		return fmt.Errorf("markov: alpha0=%g must be positive", cfg.Alpha0)
	case cfg.Sigma2 < 0:
		return fmt.Errorf("markov: sigma2=%g must not be negative (0 estimates it)", cfg.Sigma2)
	case cfg.R < 0 || cfg.R > 1:
		return fmt.Errorf("markov: r=%g must be in (0, 1] (0 to scan for it)", cfg.R)
	case cfg.Discrete && cfg.Sigma2 != 0:
		return fmt.Errorf("markov: sigma2=%g with Discrete: one-hot symbols have no Gaussian noise", cfg.Sigma2)
	}
	if _, err := solver.ByName(cfg.Solver); err != nil {
		return fmt.Errorf("markov: %w", err)
	}
	return nil
}

// setM2 is (α0+1)C2 − α0V1V1ᵀ.
func setM2(ps *pairStats, a0 float64) *mat.SymDense {
	d := len(ps.v1)
	m := mat.NewSymDense(d, nil)
	m.ScaleSym(a0+1, ps.c2)
	m.SymRankOne(m, -a0, mat.NewVecDense(d, ps.v1))
	return m
}

// finishP sets m.P = P(r) = (rU + (1−r)V)⁺V, projected onto the
// column-stochastic matrices, and m.R, from the given r or from the scan.
func finishP(m *Model, u, v *mat.Dense, cfg *Config) error {
	r := cfg.R
	if r == 0 {
		scan, rr, _, err := scanR(u, v, cfg.ScanStep)
		if err != nil {
			return err
		}
		m.Scan, r = scan, rr
		m.Fit.RScanned = true
	}
	p, err := pOfPair(u, v, r)
	if err != nil {
		return fmt.Errorf("markov: P(r=%g): %w", r, err)
	}
	projectColumns(p)
	m.R, m.P = r, rowsOf(p)
	return nil
}

// projectColumns projects every column of p onto the simplex and returns
// the Frobenius distance moved.
func projectColumns(p *mat.Dense) float64 {
	rows, cols := p.Dims()
	col := make([]float64, rows)
	var dist float64
	for j := range cols {
		mat.Col(col, j, p)
		old := append([]float64(nil), col...)
		models.ProjectSimplex(col)
		for i := range rows {
			dist += (col[i] - old[i]) * (col[i] - old[i])
			p.Set(i, j, col[i])
		}
	}
	return math.Sqrt(dist)
}

func colsMatrix(cols [][]float64) *mat.Dense {
	d, k := len(cols[0]), len(cols)
	m := mat.NewDense(d, k, nil)
	for j, c := range cols {
		for i, v := range c {
			m.Set(i, j, v)
		}
	}
	return m
}

func rowsOf(m *mat.Dense) [][]float64 {
	r, _ := m.Dims()
	out := make([][]float64, r)
	for i := range r {
		out[i] = append([]float64(nil), m.RawRowView(i)...)
	}
	return out
}

// oneHot checks that a row of a snapshot table is one state or symbol: a
// single 1 among zeros. what says whose rows they are and what else to use.
func oneHot(path, what string) func(b *stream.Dense, i int) error {
	return func(b *stream.Dense, i int) error {
		ones := 0
		for j, v := range b.Row(i) {
			switch v {
			case 1:
				ones++
			case 0:
			default:
				return stream.Errorf(path, 0, b.Start+int64(i), "", stream.ErrValue, "value %v in column %d: %s", v, j, what)
			}
		}
		if ones != 1 {
			return stream.Errorf(path, 0, b.Start+int64(i), "", stream.ErrValue, "row has %d ones: %s", ones, what)
		}
		return nil
	}
}

func identity(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := range d {
		m.Set(i, i, 1)
	}
	return m
}

// permuteSlice returns the slice whose element j is s[perm[j]].
func permuteSlice[E any](s []E, perm []int) []E {
	out := make([]E, len(s))
	for j, c := range perm {
		out[j] = s[c]
	}
	return out
}

// weightsOf returns the weights λ⁻² of tensor eigenvalues.
func weightsOf(lam []float64) []float64 {
	w := make([]float64, len(lam))
	for i, l := range lam {
		w[i] = 1 / (l * l)
	}
	return w
}
