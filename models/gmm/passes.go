package gmm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// The statistics of a fit on the exact path (d ≤ ExactDim), in two passes:
//
//	pass 1: n, Σx, Σ‖x‖² and Σxxᵀ (upper triangle): no basis;
//	pass 2: Σ(Wᵀx)^⊗3 and, with differing variances, Σx‖P⊥(x−m)‖², for
//	        the whitening W, mean m and projection P⊥ of the merged pass-1
//	        statistics, which pass 2 carries (its basis); and the sums of
//	        pass 1 again over its own rows, for the mean and σ² of the fit.
//
// Pass 1 can be appended to at any time; pass 2 takes the basis of a
// merged pass 1, and rows appended to it are whitened with that basis (the
// shard workflow checks its drift against the updated pass 1).

// The sketched path (d > ExactDim) takes the 2+PowerIters passes of the
// sketched second moment (implicit.SecondSketch: pass 1 sums Σx, Σ‖x‖² and
// Σx(xᵀΩ) for the test matrix Ω of the seed; each later one Σx(xᵀQ) for
// the range basis Q of the merged pass before, which it carries), then
// pass 3+PowerIters: the sums of pass 2 above for the whitening of the
// sketch's top eigenpairs, carrying the last sketch pass. Only pass 1 can
// be appended to; the seed, the oversampling and the power passes are
// settings of the statistics.

// Params are the settings the statistics depend on, recorded in their
// header; statistics of other settings are not merged.
type params struct {
	Differing bool                   `json:"differing,omitempty"`
	Sigma2    float64                `json:"sigma2,omitempty"`
	SigmaMin  bool                   `json:"sigma_min,omitempty"`
	Sketch    *implicit.SketchParams `json:"sketch,omitempty"`
}

// Plan is the sequence of passes of a fit with Config (an implicit.Planner);
// Path names the input in errors.
type Plan struct {
	Config Config
	Path   string
}

// header returns the header of pass phase of a fit with cfg over rows of d
// columns.
func header(cfg Config, d, phase int) statsfile.Header {
	cfg.defaults()
	pr := params{Differing: cfg.Differing, Sigma2: cfg.Sigma2, SigmaMin: cfg.SigmaMin, Sketch: cfg.sketch(d)}
	h := statsfile.Header{Model: "gmm", Phase: phase, D: d, K: cfg.K, Cols: cfg.K}
	pr.Sketch.Mark(&h)
	h.Params, _ = json.Marshal(pr)
	return h
}

// sketch returns the settings of the sketch of a fit over rows of d
// columns, or nil on the exact path.
func (c Config) sketch(d int) *implicit.SketchParams {
	return implicit.SketchFor(d, c.ExactDim, c.Oversample, c.PowerIters, c.Seed)
}

// ConfigFromStats returns cfg with the settings that the statistics' header
// h fixes (K, Differing, Sigma2, SigmaMin, and on the sketched path the
// sketch's Oversample, PowerIters and Seed) taken from it.
func ConfigFromStats(cfg Config, h statsfile.Header) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, "gmm"); err != nil {
		return cfg, fmt.Errorf("gmm: %w", err)
	}
	cfg.K, cfg.Differing, cfg.Sigma2, cfg.SigmaMin = h.K, p.Differing, p.Sigma2, p.SigmaMin
	cfg.ExactDim = h.D
	if sk := p.Sketch; sk != nil {
		cfg.ExactDim, cfg.Oversample, cfg.PowerIters, cfg.Seed = -1, sk.Oversample, sk.PowerIters, sk.Seed
	}
	return cfg, nil
}

// config returns the settings of the pass after (or of) the statistics
// with header h, defaults applied.
func (p *Plan) config(h statsfile.Header) (Config, error) {
	cfg, err := ConfigFromStats(p.Config, h)
	cfg.defaults()
	return cfg, err
}

// sketch returns the sketched second moment of a fit with cfg over rows of
// d columns, or nil on the exact path (d ≤ ExactDim).
func (p *Plan) sketch(d int, cfg Config) *implicit.SecondSketch {
	path := p.Path
	check := func(b *stream.Dense) error { return models.CheckRows(path, b, d) }
	return implicit.NewSecondSketch(header(cfg, d, 0), cfg.sketch(d), true, check,
		// E[xxᵀ] − shift·I: the first product is unshifted, the power and
		// Rayleigh–Ritz products remove the noise floor (see sketchShift).
		func(y, b *mat.Dense, mo *implicit.Moments, first bool) {
			y.Scale(1/float64(mo.N), y)
			if !first {
				var sb mat.Dense
				sb.Scale(sketchShift(mo, d), b)
				y.Sub(y, &sb)
			}
		})
}

// sketchShift is subtracted from the diagonal of E[xxᵀ] after the first
// sketch pass: tr Cov/d, an upper estimate of σ² close to it when d ≫ k.
// The noise floor σ²I dominates the tail of the spectrum, and removing it
// makes each power pass shrink the noise directions by
// |λ_noise − shift|/(λ_k − shift) instead of λ_noise/λ_k.
func sketchShift(mo *implicit.Moments, d int) float64 {
	nf := float64(mo.N)
	var mm float64
	for _, v := range mo.Sum {
		mm += v * v
	}
	return (mo.SumSq/nf - mm/(nf*nf)) / float64(d)
}

// First returns pass 1 for rows of d columns.
func (p *Plan) First(d int) (*implicit.Pass, error) {
	cfg := p.Config
	cfg.defaults()
	if cfg.atDim && d > 0 && cfg.K > d {
		cfg.K = d // the header carries it to the later passes
	}
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	path := p.Path
	pass, err := implicit.FirstPass(p.sketch(d, cfg), header(cfg, d, 1), cfg.ExactDim, func(b *stream.Dense) error { return models.CheckRows(path, b, d) })
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	return pass, nil
}

// lastPhase is the phase of the third-moment pass, the last.
func lastPhase(sk *implicit.SecondSketch) int { return 2 + sk.Extra() }

// MaxPasses is the most passes a fit with c takes, whatever the width of
// its rows: those of the sketched path (d > ExactDim), 3 + PowerIters; the
// exact path takes 2. A pipeline built before it reads the data sizes its
// stages by it.
func (c Config) MaxPasses() int {
	c.defaults()
	return lastPhase(nil) + implicit.SketchParams{PowerIters: c.PowerIters}.Passes() - 1
}

// carriedSpectrum is the spectrum of the second-moment totals that the
// third-moment pass carries (fixed): the same values, so the same W, on
// every shard.
func (p *Plan) carriedSpectrum(d int, fixed []implicit.Fixed, cfg *Config) (*spectrum, error) {
	if sk := p.sketch(d, *cfg); sk != nil {
		vals, u, mo, err := sk.Ritz(fixed, sk.Rank())
		if err != nil {
			return nil, fmt.Errorf("gmm: %w", err)
		}
		shift := sketchShift(mo, d)
		for i := range vals {
			vals[i] += shift // the Rayleigh–Ritz product was shifted
		}
		fm := &firstMoments{n: mo.N, sum: mo.Sum, sumSq: mo.SumSq}
		return finishSpectrum(&spectrum{passes: sk.Passes(), method: "sketch"}, fm, u, vals, d, cfg)
	}
	mo, err := implicit.CarriedMoments(fixed, d)
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	fm := &firstMoments{n: mo.N, sum: mo.Sum, sumSq: mo.SumSq}
	return exactSpectrum(fm, mo.Second, d, cfg)
}

// Next returns the pass after the merged statistics st, or nil after the
// third-moment pass.
func (p *Plan) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	cfg, err := p.config(st.Header)
	if err != nil {
		return nil, err
	}
	d := st.Header.D
	sk := p.sketch(d, cfg)
	if st.Header.Phase >= lastPhase(sk) {
		return nil, nil
	}
	if st.Rows == 0 {
		return nil, fmt.Errorf("gmm: the source has no rows")
	}
	if sk == nil {
		return p.third(d, cfg, implicit.MomentsFixed(st))
	}
	if st.Header.Phase < sk.Passes() {
		pass, err := sk.Next(st)
		if err != nil {
			return nil, fmt.Errorf("gmm: %w", err)
		}
		return pass, nil
	}
	fixed, err := sk.Carry(st)
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	return p.third(d, cfg, fixed)
}

// Like returns the pass whose statistics st are, with their basis, so that
// more shards can be added to them: pass 1, or on the exact path pass 2.
func (p *Plan) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	cfg, err := p.config(st.Header)
	if err != nil {
		return nil, err
	}
	q := &Plan{Config: cfg, Path: p.Path}
	switch {
	case st.Header.Phase == 1:
		return q.First(st.Header.D)
	case p.sketch(st.Header.D, cfg) != nil:
		return nil, fmt.Errorf("gmm pass %d (sketched): %w", st.Header.Phase, implicit.ErrNoAppend)
	}
	return q.third(st.Header.D, cfg, st.Fixed)
}

// Basis returns the whitening W (d×k) of pass 2 after the pass-1
// statistics st, or the one the pass-2 statistics st used: the basis whose
// drift an append to pass 2 checks (exact path).
func (p *Plan) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	cfg, err := p.config(st.Header)
	if err != nil {
		return nil, err
	}
	if p.sketch(st.Header.D, cfg) != nil {
		return nil, fmt.Errorf("gmm pass %d (sketched): %w", st.Header.Phase, implicit.ErrNoAppend)
	}
	fixed := st.Fixed
	if st.Header.Phase == 1 {
		fixed = implicit.MomentsFixed(st)
	}
	sp, err := p.carriedSpectrum(st.Header.D, fixed, &cfg)
	if err != nil {
		return nil, err
	}
	w, _, _, err := whitening(sp, st.Header.D, cfg.K)
	return w, err
}

// third returns the third-moment pass for the carried second-moment
// totals fixed.
func (p *Plan) third(d int, cfg Config, fixed []implicit.Fixed) (*implicit.Pass, error) {
	k := cfg.K
	sp, err := p.carriedSpectrum(d, fixed, &cfg)
	if err != nil {
		return nil, err
	}
	w, _, _, err := whitening(sp, d, k)
	if err != nil {
		return nil, err
	}
	sk := p.sketch(d, cfg)
	// On the exact path, pass 2 sums the moments of pass 1 again over its
	// own rows: the fit takes the mean and σ² from them, so that rows
	// appended to pass 2 (whitened with the basis of fewer rows) count in
	// them too.
	var sums []implicit.SumShape
	if sk == nil {
		sums = implicit.MomentSums(d)
	}
	sums = append(sums, implicit.SumShape{Name: "third", Len: len(solver.NewSym3(k).Data)})
	var qc *mat.Dense
	if cfg.Differing {
		sums = append(sums, implicit.SumShape{Name: "m1", Len: d})
		qc = sp.qc
	}
	path := p.Path
	check := func(b *stream.Dense) error { return models.CheckRows(path, b, d) }
	var moments func() implicit.BatchFunc
	if sk == nil {
		moments = implicit.MomentWorker(d, check)
	}
	return &implicit.Pass{
		Header: header(cfg, d, lastPhase(sk)),
		Sums:   sums,
		Fixed:  fixed,
		Worker: func() implicit.BatchFunc {
			th := newThirdBatch(w, qc, sp.mean)
			var mw implicit.BatchFunc
			if moments != nil {
				mw = moments() // its scratch is d×d: the exact path's only
			}
			return func(b *stream.Dense, out [][]float64, commit func() error) error {
				if mw != nil {
					if err := mw(b, out[:3], commit); err != nil {
						return err
					}
					out = out[3:]
				} else if err := check(b); err != nil {
					return err
				}
				var m1 []float64
				if len(out) > 1 {
					m1 = out[1]
				}
				th.add(b, &solver.Sym3{K: k, Data: out[0]}, m1)
				return nil
			}
		},
	}, nil
}

// FitStats fits the mixture from the merged statistics of the
// third-moment pass; the settings the statistics fix are taken from them,
// the solver's from cfg.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	p := &Plan{Config: cfg}
	cfg, err := p.config(st.Header)
	if err != nil {
		return nil, err
	}
	d, k := st.Header.D, cfg.K
	sk := p.sketch(d, cfg)
	if last := lastPhase(sk); st.Header.Phase != last {
		return nil, fmt.Errorf("gmm: a fit needs the statistics of pass %d, not pass %d", last, st.Header.Phase)
	}
	// The whitening of the basis (the second moment over the rows it was
	// computed from), and on the exact path the mean and σ² of pass 2's own
	// rows: the same when nothing was appended to pass 2.
	basis, err := p.carriedSpectrum(d, st.Fixed, &cfg)
	if err != nil {
		return nil, err
	}
	w, b, white, err := whitening(basis, d, k)
	if err != nil {
		return nil, err
	}
	own := basis
	if sk == nil {
		if own, err = p.carriedSpectrum(d, implicit.MomentsFixed(st), &cfg); err != nil {
			return nil, err
		}
	}
	tm := &thirdMoments{n: st.Rows, t: &solver.Sym3{K: k, Data: st.Sum("third")}, m1: st.Sum("m1")}
	if len(tm.t.Data) != len(solver.NewSym3(k).Data) || (cfg.Differing && len(tm.m1) != d) {
		return nil, fmt.Errorf("gmm: pass-%d statistics of the wrong shape for d=%d, k=%d", st.Header.Phase, d, k)
	}
	return recoverModel(ctx, own, tm, w, b, white, cfg)
}
