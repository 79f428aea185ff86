package ica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The statistics of a fit on the exact path (d ≤ ExactDim):
//
//	pass 1:  Σx, Σ‖x‖², Σxxᵀ (implicit.MomentSums): no basis;
//	pass 2:  Σzzᵀ and Σ(vᵀz)z^⊗3 of the whitened rows z, for the whitening
//	         of the merged pass 1, which it carries;
//	pass 3+: the polishing contractions Σz(θᵢᵀz)³ and Σ(θᵢᵀz)⁴ for the
//	         columns θ that the solver (pass 3) or the previous polishing
//	         step gives; each carries pass 1, pass 2's sums and θ.
//
// The solver's settings decide θ, so they are settings of the statistics
// from pass 3 on. Pass 1 can always be appended to; every later pass
// depends on the merged pass before it over all the data.
//
// On the sketched path (d > ExactDim) the covariance is sketched instead
// (implicit.SecondSketch): pass 1 sums Σx, Σ‖x‖² and Σx(xᵀΩ) for the test
// matrix Ω of the seed, passes 2 … 2+PowerIters Σx(xᵀQ) for the range
// basis Q of the merged pass before, which they carry; then the passes
// above follow, each carrying the last sketch pass (its Q and totals) in
// place of pass 1: the whitened third-order pass is pass 3+PowerIters.
// The oversampling and the power passes are settings of the statistics.

// params are the settings of a fit its statistics depend on.
type params struct {
	Refine int `json:"refine"`
	// Contrast of the polishing passes; statistics written before it
	// existed (no field) are "kurtosis"'s.
	Contrast string `json:"contrast,omitempty"`
	Solver   string `json:"solver"`
	Restarts int    `json:"restarts,omitempty"`
	Iters    int    `json:"iters,omitempty"`
	Seed     uint64 `json:"seed"`
	// Asked is the K the fit was asked for when the data support fewer
	// (the header's K); omitted otherwise.
	Asked int `json:"asked,omitempty"`
	// Sketch is set on the sketched path.
	Sketch *implicit.SketchParams `json:"sketch,omitempty"`
}

// Plan is the passes of a fit with Config (an implicit.Planner); Path
// names the input in errors.
type Plan struct {
	Config Config
	Path   string

	// solved keeps the solver's answer for the merged pass-2 sums it was
	// given: every polishing pass's statistics carry those sums, and the
	// plan would otherwise solve the same tensor again after each pass
	// (the same answer: the solve is deterministic). mu guards it for
	// pipelines that share a plan between workers.
	mu     sync.Mutex
	solved *solved
}

// solved is a solver's answer, the pass-2 sums and the settings it
// answers.
type solved struct {
	s2, g2  []float64
	how     solveSettings
	res     *solver.Result
	partial string
}

// solveSettings are what a solve depends on besides the tensor.
type solveSettings struct {
	solver             string
	k, restarts, iters int
	seed               uint64
	refine             bool
}

// solve returns the solver's answer for the pass-2 sums s2 and g2 and the
// tensor t they give (from the memo when the sums are the last ones
// solved), with partial saying how it fell short ("" when it did not).
func (p *Plan) solve(ctx context.Context, bs *basis, t *solver.Sym3, s2, g2 []float64) (*solver.Result, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	how := solveSettings{bs.cfg.Solver, bs.k, bs.cfg.Restarts, bs.cfg.Iters, bs.cfg.Seed, bs.cfg.Refine >= 0}
	if m := p.solved; m != nil && m.how == how && slices.Equal(m.s2, s2) && slices.Equal(m.g2, g2) {
		return m.res, m.partial, nil
	}
	k := bs.k
	solve, err := solver.ByName(bs.cfg.Solver)
	if err != nil {
		return nil, "", fmt.Errorf("ica: %w", err)
	}
	res, err := solve(ctx, t, k, solver.Options{Restarts: bs.cfg.Restarts, Iters: bs.cfg.Iters, Seed: bs.cfg.Seed})
	var partial string
	if err != nil {
		// A solver that found some of the components but not all (an
		// iteration that did not settle, a weight it could not confirm)
		// still gives the polishing steps a start: the others begin
		// orthogonal to those it found, and the steps separate them, as
		// FastICA's do from any orthogonal start. Without polishing
		// steps there is nothing to separate them, and it is refused.
		if res == nil || bs.cfg.Refine < 0 || !(errors.Is(err, solver.ErrNoConvergence) || errors.Is(err, solver.ErrNonPositive)) {
			return nil, "", fmt.Errorf("ica: %w (k=%d may exceed the number of non-Gaussian sources)", err, k)
		}
		got := 0
		if res.Factors != nil {
			_, got = res.Factors.Dims()
		}
		res.Factors = completeColumns(res.Factors, k, bs.cfg.Seed)
		partial = fmt.Sprintf("the solver gave %d of the %d components (%v); the polishing steps started the other %d orthogonal to them", got, k, err, k-got)
	}
	p.solved = &solved{s2: slices.Clone(s2), g2: slices.Clone(g2), how: how, res: res, partial: partial}
	return res, partial, nil
}

// ConfigFromStats returns cfg with the settings the statistics' header h
// fixes (K, Refine, the solver's settings, Seed).
func ConfigFromStats(cfg Config, h statsfile.Header) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, "ica"); err != nil {
		return cfg, fmt.Errorf("ica: %w", err)
	}
	cfg.K, cfg.Refine, cfg.Solver, cfg.Restarts, cfg.Iters, cfg.Seed, cfg.asked = h.K, p.Refine, p.Solver, p.Restarts, p.Iters, p.Seed, p.Asked
	cfg.Contrast = p.Contrast
	if cfg.Contrast == "" {
		cfg.Contrast = ContrastKurtosis
	}
	cfg.ExactDim = h.D
	if sk := p.Sketch; sk != nil {
		cfg.ExactDim, cfg.Oversample, cfg.PowerIters = -1, sk.Oversample, sk.PowerIters
	}
	return cfg, nil
}

func (p *Plan) config(h *statsfile.Header) (Config, error) {
	cfg := p.Config
	if h != nil {
		var err error
		if cfg, err = ConfigFromStats(cfg, *h); err != nil {
			return cfg, err
		}
	}
	cfg.defaults()
	return cfg, nil
}

// header returns the header of pass phase of a fit with cfg (defaults
// applied) over rows of d columns.
func header(cfg Config, d, phase int) statsfile.Header {
	sk := implicit.SketchFor(d, cfg.ExactDim, cfg.Oversample, cfg.PowerIters, cfg.Seed)
	pr := params{Refine: cfg.Refine, Contrast: cfg.Contrast, Solver: cfg.Solver, Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Asked: cfg.asked, Sketch: sk}
	if pr.Contrast == ContrastKurtosis {
		pr.Contrast = "" // as written before the contrast was a setting
	}
	h := statsfile.Header{Model: "ica", Phase: phase, D: d, K: cfg.K, Cols: cfg.K}
	sk.Mark(&h)
	h.Params, _ = json.Marshal(pr)
	return h
}

// sketch returns the sketched covariance of a fit with cfg over rows of d
// columns, or nil on the exact path (d ≤ ExactDim).
func (p *Plan) sketch(d int, cfg Config) *implicit.SecondSketch {
	path := p.Path
	check := func(b *stream.Dense) error { return models.CheckRows(path, b, d) }
	sp := implicit.SketchFor(d, cfg.ExactDim, cfg.Oversample, cfg.PowerIters, cfg.Seed)
	return implicit.NewSecondSketch(header(cfg, d, 0), sp, false, check,
		// The covariance: E[x xᵀB] − m(mᵀB).
		func(y, b *mat.Dense, mo *implicit.Moments, _ bool) {
			nf := float64(mo.N)
			y.Scale(1/nf, y)
			m := make([]float64, d)
			for i, v := range mo.Sum {
				m[i] = v / nf
			}
			mv := mat.NewVecDense(d, m)
			var mb mat.VecDense
			mb.MulVec(b.T(), mv)
			var outer mat.Dense
			outer.Outer(1, mv, &mb)
			y.Sub(y, &outer)
		})
}

// First returns pass 1 for rows of d columns.
func (p *Plan) First(d int) (*implicit.Pass, error) {
	cfg, _ := p.config(nil)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	path := p.Path
	pass, err := implicit.FirstPass(p.sketch(d, cfg), header(cfg, d, 1), cfg.ExactDim, func(b *stream.Dense) error { return models.CheckRows(path, b, d) })
	if err != nil {
		return nil, fmt.Errorf("ica: %w", err)
	}
	return pass, nil
}

// MaxPasses is the most passes a fit with c takes, whatever the width of
// its rows: pass 1, the whitened third-order pass and Refine polishing
// passes on the exact path, and the 1 + PowerIters passes of the sketch
// besides on the sketched path (d > ExactDim). A pipeline built before it
// reads the data sizes its stages by it.
func (c Config) MaxPasses() int {
	c.defaults()
	return 2 + max(c.Refine, 0) + implicit.SketchParams{PowerIters: c.PowerIters}.Passes() - 1
}

// basis is what the carried pass-1 totals give the later passes.
type basis struct {
	sp     *spec
	w, b   *mat.Dense
	white  []float64
	mw     []float64 // Wᵀm
	fixed1 []implicit.Fixed
	v      []float64
	cfg    Config
	d, k   int
	off    int // offset of the passes
}

// carried derives the whitening from the second-moment totals that st
// carries (or, for statistics of the last second-moment pass, holds).
func (p *Plan) carried(ctx context.Context, st *implicit.DenseStats) (*basis, error) {
	cfg, err := p.config(&st.Header)
	if err != nil {
		return nil, err
	}
	d, k := st.Header.D, min(cfg.K, st.Header.D)
	sk := p.sketch(d, cfg)
	off := sk.Extra()
	var fixed []implicit.Fixed
	switch n1 := 4; {
	case st.Header.Phase < 1+off:
		return nil, fmt.Errorf("ica: pass %d of the sketch gives no whitening yet", st.Header.Phase)
	case st.Header.Phase > 1+off:
		if sk != nil {
			n1 = implicit.CarriedLen
		}
		if len(st.Fixed) < n1 {
			return nil, fmt.Errorf("ica: the statistics of pass %d do not carry the second moment", st.Header.Phase)
		}
		fixed = st.Fixed[:n1]
	case sk == nil:
		fixed = implicit.MomentsFixed(st)
	default:
		if fixed, err = sk.Carry(st); err != nil {
			return nil, fmt.Errorf("ica: %w", err)
		}
	}
	var sp *spec
	var sumSq float64
	if sk == nil {
		mo, err := implicit.CarriedMoments(fixed, d)
		if err != nil {
			return nil, fmt.Errorf("ica: %w", err)
		}
		sp, err = exactSpectrum(ctx, &first{n: mo.N, sum: mo.Sum, sumSq: mo.SumSq, s: mo.Second}, d, &cfg)
		if err != nil {
			return nil, err
		}
		sumSq = mo.SumSq
	} else {
		vals, u, mo, err := sk.Ritz(fixed, k)
		if err != nil {
			return nil, fmt.Errorf("ica: sketching the covariance: %w", err)
		}
		sp = newSpec(&first{n: mo.N, sum: mo.Sum, sumSq: mo.SumSq}, d)
		sp.u, sp.vals, sp.method, sp.passes = u, vals, "sketch", sk.Passes()
		noise(sp, mo.SumSq, d, k)
		sumSq = mo.SumSq
	}
	// Real data may support fewer sources than asked (k above d, constant
	// columns, rows less their own mean): the fit takes as many as there
	// are, and says so (fewerWarning); the later passes' headers carry
	// the lower k and the one asked.
	got := sp.supported(sumSq, d, k)
	if got == 0 {
		return nil, fmt.Errorf("%w (the largest is %.3g, noise %.3g): the rows do not vary", ErrSpectrum, sp.vals[0], sp.sigma2)
	}
	if got < cfg.K {
		cfg.asked = max(cfg.asked, cfg.K)
		cfg.K = got
	}
	k = got
	w, b, white := whitening(sp, d, k)
	return &basis{sp: sp, w: w, b: b, white: white, mw: meanW(w, sp.mean), fixed1: fixed, v: contractionVector(k, cfg.Seed), cfg: cfg, d: d, k: k, off: off}, nil
}

// pass2 returns pass 2 (2+offset on the sketched path) for the basis bs.
func (p *Plan) pass2(bs *basis) *implicit.Pass {
	k, d, path := bs.k, bs.d, p.Path
	return &implicit.Pass{
		Header: header(bs.cfg, d, 2+bs.off),
		Sums:   []implicit.SumShape{{Name: "s", Len: k * k}, {Name: "g", Len: len(solver.NewSym3(k).Data)}},
		Fixed:  bs.fixed1,
		Worker: func() implicit.BatchFunc {
			var scratch []float64
			var cubes implicit.CubeScratch
			wr := bs.w.RawMatrix()
			return func(b *stream.Dense, out [][]float64, _ func() error) error {
				if err := models.CheckRows(path, b, d); err != nil {
					return err
				}
				z := whitenBatch(b, wr, bs.mw, &scratch)
				addThird(z, bs.v, blas64.Symmetric{N: k, Stride: k, Uplo: blas.Upper, Data: out[0]}, &solver.Sym3{K: k, Data: out[1]}, &cubes)
				return nil
			}
		},
	}
}

// contractPass returns the polishing pass (phase ≥ 3) for the columns
// theta, carrying pass 1, pass 2's sums and theta.
func (p *Plan) contractPass(bs *basis, phase int, fixed2 []implicit.Fixed, theta *mat.Dense) *implicit.Pass {
	k, d, path := bs.k, bs.d, p.Path
	fixed := append(append(append([]implicit.Fixed(nil), bs.fixed1...), fixed2...), implicit.Fixed{Name: "theta", Values: append([]float64(nil), theta.RawMatrix().Data...)})
	th := mat.DenseCopyOf(theta).RawMatrix()
	logcosh := bs.cfg.Contrast == ContrastLogcosh
	sums := []implicit.SumShape{{Name: "g", Len: k * k}, {Name: "q", Len: k}}
	if logcosh {
		sums = append(sums, implicit.SumShape{Name: "p", Len: k})
	}
	return &implicit.Pass{
		Header: header(bs.cfg, d, phase),
		Sums:   sums,
		Fixed:  fixed,
		Worker: func() implicit.BatchFunc {
			var scratch, y []float64
			wr := bs.w.RawMatrix()
			return func(b *stream.Dense, out [][]float64, _ func() error) error {
				if err := models.CheckRows(path, b, d); err != nil {
					return err
				}
				z := whitenBatch(b, wr, bs.mw, &scratch)
				g := blas64.General{Rows: k, Cols: k, Stride: k, Data: out[0]}
				var p []float64 // the kurtosis contrast's pass has no Σ g'
				if logcosh {
					p = out[2]
				}
				addContract(z, th, &y, g, out[1], p)
				return nil
			}
		},
	}
}

// state is where the statistics of a pass after the first leave the fit.
type state struct {
	bs     *basis
	res    *solver.Result
	s      *mat.SymDense // S = E[zzᵀ]
	fixed2 []implicit.Fixed
	theta  *mat.Dense // the columns of the next pass, or the final ones
	kappa  []float64  // the kurtoses of the last contraction pass
	iters  int        // polishing steps taken
	done   bool       // no further pass
	// partial says how the solver fell short, when the polishing started
	// from its partial answer ("" when it gave every component).
	partial string
}

// advance solves and polishes as the fit does, from statistics of pass 2
// or later.
func (p *Plan) advance(ctx context.Context, st *implicit.DenseStats) (*state, error) {
	bs, err := p.carried(ctx, st)
	if err != nil {
		return nil, err
	}
	k := bs.k
	var fixed2 []implicit.Fixed
	if st.Header.Phase == 2+bs.off {
		fixed2 = []implicit.Fixed{{Name: "s2", Values: st.Sum("s")}, {Name: "g2", Values: st.Sum("g")}, {Name: "rows2", Values: []float64{float64(st.Rows)}}}
	} else {
		f := implicit.DenseStats{Fixed: st.Fixed}
		fixed2 = []implicit.Fixed{{Name: "s2", Values: f.Get("s2")}, {Name: "g2", Values: f.Get("g2")}, {Name: "rows2", Values: f.Get("rows2")}}
	}
	ds := implicit.DenseStats{Fixed: fixed2}
	s2, g2, rows2 := ds.Get("s2"), ds.Get("g2"), ds.Get("rows2")
	if len(s2) != k*k || len(g2) != len(solver.NewSym3(k).Data) || len(rows2) != 1 {
		return nil, fmt.Errorf("ica: the statistics of pass %d do not carry the sums of pass 2", st.Header.Phase)
	}
	n := int64(rows2[0])
	if n == 0 {
		return nil, errNoRows
	}
	if n != bs.sp.n {
		return nil, fmt.Errorf("ica: the source changed between passes (%d rows, then %d)", bs.sp.n, n)
	}
	sm := mat.NewSymDense(k, append([]float64(nil), s2...))
	t, s := finishThird(sm, &solver.Sym3{K: k, Data: append([]float64(nil), g2...)}, n, bs.v)
	res, partial, err := p.solve(ctx, bs, t, s2, g2)
	if err != nil {
		return nil, err
	}
	out := &state{bs: bs, res: res, s: s, fixed2: fixed2, theta: mat.DenseCopyOf(res.Factors), partial: partial}
	if st.Header.Phase == 2+bs.off {
		return out, nil
	}
	// A polishing pass: the refine loop's step it = phase − 2 − offset.
	if st.Rows != n {
		return nil, fmt.Errorf("ica: the source changed between passes (%d rows, then %d)", n, st.Rows)
	}
	maxIter := max(bs.cfg.Refine, 0)
	it := st.Header.Phase - 2 - bs.off
	th := (&implicit.DenseStats{Fixed: st.Fixed}).Get("theta")
	if len(th) != k*k {
		return nil, fmt.Errorf("ica: the statistics of pass %d do not carry the columns θ", st.Header.Phase)
	}
	theta := mat.NewDense(k, k, append([]float64(nil), th...))
	sums := mat.NewDense(k, k, append([]float64(nil), st.Sum("g")...))
	g, kappa := finishContract(mat.DenseCopyOf(sums), st.Sum("q"), st.Rows, s, theta)
	out.kappa, out.theta, out.iters, out.done = kappa, mat.DenseCopyOf(theta), it-1, true
	if it > maxIter {
		return out, nil
	}
	var change float64
	var ok bool
	tol := refineTol
	if bs.cfg.Contrast == ContrastLogcosh {
		change, ok = logcoshStep(theta, sums, st.Sum("p"), st.Rows, s)
		tol = logcoshTol
	} else {
		change, ok = refineStep(theta, g, kappa)
	}
	if !ok {
		return out, nil
	}
	out.theta, out.iters = theta, it
	out.done = change < tol || it == maxIter
	return out, nil
}

// Next returns the pass after the merged statistics st, or nil when st
// holds all the fit needs.
func (p *Plan) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	cfg, err := p.config(&st.Header)
	if err != nil {
		return nil, err
	}
	if st.Header.Phase == 1 && st.Rows < 2 {
		return nil, fmt.Errorf("ica: the source has %d rows, need at least 2", st.Rows)
	}
	sk := p.sketch(st.Header.D, cfg)
	switch off := sk.Extra(); {
	case st.Header.Phase < 1+off:
		pass, err := sk.Next(st)
		if err != nil {
			return nil, fmt.Errorf("ica: %w", err)
		}
		return pass, nil
	case st.Header.Phase == 1+off:
		bs, err := p.carried(ctx, st)
		if err != nil {
			return nil, err
		}
		return p.pass2(bs), nil
	}
	s, err := p.advance(ctx, st)
	if err != nil || s.done {
		return nil, err
	}
	return p.contractPass(s.bs, st.Header.Phase+1, s.fixed2, s.theta), nil
}

// Like returns pass 1, to add rows to pass-1 statistics st; the later
// passes depend on the solver's answer (or the sketch's basis) for exactly
// their rows (implicit.ErrNoAppend).
func (p *Plan) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	if st.Header.Phase != 1 {
		return nil, fmt.Errorf("ica pass %d: %w", st.Header.Phase, implicit.ErrNoAppend)
	}
	cfg, err := p.config(&st.Header)
	if err != nil {
		return nil, err
	}
	return (&Plan{Config: cfg, Path: p.Path}).First(st.Header.D)
}

// Basis returns the whitening W that the pass after the pass-1 statistics
// st uses, or that st's pass used.
func (p *Plan) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	bs, err := p.carried(ctx, st)
	if err != nil {
		return nil, err
	}
	return bs.w, nil
}

// FitStats fits the sources from the merged statistics of the last pass of
// Plan; the settings the statistics fix are taken from them.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	return (&Plan{Config: cfg}).fitStats(ctx, st, cfg)
}

// fitStats is FitStats with p's memo of the solver's answer (the one the
// passes of a fit through p already found).
func (p *Plan) fitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	p.Config = cfg
	c, err := p.config(&st.Header)
	if err != nil {
		return nil, err
	}
	if first := 3 + p.sketch(st.Header.D, c).Extra(); st.Header.Phase < first {
		return nil, fmt.Errorf("ica: a fit needs the statistics of the last polishing pass (pass %d or later), not pass %d", first, st.Header.Phase)
	}
	s, err := p.advance(ctx, st)
	if err != nil {
		return nil, err
	}
	if !s.done {
		return nil, fmt.Errorf("ica: the statistics of pass %d are not the last: the fit takes pass %d", st.Header.Phase, st.Header.Phase+1)
	}
	bs := s.bs
	m := buildModel(s.theta, s.kappa, bs.b, bs.sp, bs.white, s.res, bs.cfg)
	if s.partial != "" {
		m.Fit.Warnings = append(m.Fit.Warnings, s.partial)
		m.Fit.Converged = false
	}
	m.Fit.Passes = st.Header.Phase
	m.Fit.RefineIters = s.iters
	return m, nil
}
