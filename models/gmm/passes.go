package gmm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
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
// shard workflow checks its drift against the updated pass 1). The
// sketched path (d > ExactDim) is not split into mergeable passes.

// Params are the settings the statistics depend on, recorded in their
// header; statistics of other settings are not merged.
type params struct {
	Differing bool    `json:"differing,omitempty"`
	Sigma2    float64 `json:"sigma2,omitempty"`
	SigmaMin  bool    `json:"sigma_min,omitempty"`
}

// Plan is the sequence of passes of a fit with Config (an implicit.Planner);
// Path names the input in errors.
type Plan struct {
	Config Config
	Path   string
}

func (p *Plan) header(d, phase int) implicit.StatsHeader {
	c := p.Config
	pj, _ := json.Marshal(params{Differing: c.Differing, Sigma2: c.Sigma2, SigmaMin: c.SigmaMin})
	return implicit.StatsHeader{Model: "gmm", Phase: phase, D: d, K: c.K, Cols: c.K, Params: pj}
}

// ConfigFromStats returns cfg with the settings that the statistics' header
// h fixes (K, Differing, Sigma2, SigmaMin) taken from it.
func ConfigFromStats(cfg Config, h implicit.StatsHeader) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, "gmm"); err != nil {
		return cfg, fmt.Errorf("gmm: %w", err)
	}
	cfg.K, cfg.Differing, cfg.Sigma2, cfg.SigmaMin = h.K, p.Differing, p.Sigma2, p.SigmaMin
	return cfg, nil
}

// First returns pass 1 for rows of d columns.
func (p *Plan) First(d int) (*implicit.Pass, error) {
	cfg := p.Config
	cfg.defaults()
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	path := p.Path
	pass, err := implicit.MomentPass(p.header(d, 1), cfg.ExactDim, func(b *stream.Dense) error { return checkBatch(path, b, d) })
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	return pass, nil
}

// carriedSpectrum is the spectrum of the pass-1 totals that pass-2
// statistics carry: the same values, so the same W, on every shard.
func carriedSpectrum(st *implicit.DenseStats, cfg *Config) (*spectrum, error) {
	d := st.Header.D
	mo, err := implicit.CarriedMoments(st.Fixed, d)
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	fm := &firstMoments{n: mo.N, sum: mo.Sum, sumSq: mo.SumSq}
	return exactSpectrum(fm, mo.Second, d, cfg)
}

// Next returns pass 2 after the merged pass-1 statistics st, or nil after
// pass 2.
func (p *Plan) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	if st.Header.Phase >= 2 {
		return nil, nil
	}
	if st.Rows == 0 {
		return nil, fmt.Errorf("gmm: the source has no rows")
	}
	return p.pass2(st.Header, implicit.MomentsFixed(st))
}

// Like returns the pass whose statistics st are, with their basis, so that
// more shards can be added to them.
func (p *Plan) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	cfg, err := ConfigFromStats(p.Config, st.Header)
	if err != nil {
		return nil, err
	}
	q := &Plan{Config: cfg, Path: p.Path}
	if st.Header.Phase == 1 {
		return q.First(st.Header.D)
	}
	return q.pass2(st.Header, st.Fixed)
}

// Basis returns the whitening W (d×k) of pass 2 after the pass-1
// statistics st, or the one the pass-2 statistics st used: the basis whose
// drift an append to pass 2 checks.
func (p *Plan) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	cfg, err := ConfigFromStats(p.Config, st.Header)
	if err != nil {
		return nil, err
	}
	cfg.defaults()
	fixed := st.Fixed
	if st.Header.Phase == 1 {
		fixed = implicit.MomentsFixed(st)
	}
	sp, err := carriedSpectrum(&implicit.DenseStats{Header: st.Header, Fixed: fixed}, &cfg)
	if err != nil {
		return nil, err
	}
	w, _, _, err := whitening(sp, st.Header.D, cfg.K)
	return w, err
}

// pass2 returns pass 2 for the carried pass-1 totals fixed.
func (p *Plan) pass2(h implicit.StatsHeader, fixed []implicit.Fixed) (*implicit.Pass, error) {
	cfg, err := ConfigFromStats(p.Config, h)
	if err != nil {
		return nil, err
	}
	cfg.defaults()
	d, k := h.D, cfg.K
	sp, err := carriedSpectrum(&implicit.DenseStats{Header: h, Fixed: fixed}, &cfg)
	if err != nil {
		return nil, err
	}
	w, _, _, err := whitening(sp, d, k)
	if err != nil {
		return nil, err
	}
	// Pass 2 sums the moments of pass 1 again over its own rows: the fit
	// takes the mean and σ² from them, so that rows appended to pass 2
	// (whitened with the basis of fewer rows) count in them too.
	sums := append(implicit.MomentSums(d), implicit.SumShape{Name: "third", Len: len(solver.NewSym3(k).Data)})
	var qc *mat.Dense
	if cfg.Differing {
		sums = append(sums, implicit.SumShape{Name: "m1", Len: d})
		qc = sp.qc
	}
	path := p.Path
	q := &Plan{Config: cfg}
	check := func(b *stream.Dense) error { return checkBatch(path, b, d) }
	moments := implicit.MomentWorker(d, check)
	return &implicit.Pass{
		Header: q.header(d, 2),
		Sums:   sums,
		Fixed:  fixed,
		Worker: func() implicit.BatchFunc {
			th := newThirdBatch(w, qc, sp.mean)
			mw := moments()
			return func(b *stream.Dense, out [][]float64, commit func() error) error {
				if err := mw(b, out[:3], commit); err != nil {
					return err
				}
				var m1 []float64
				if len(out) > 4 {
					m1 = out[4]
				}
				th.add(b, &solver.Sym3{K: k, Data: out[3]}, m1)
				return nil
			}
		},
	}, nil
}

// FitStats fits the mixture from merged pass-2 statistics; the settings the
// statistics fix are taken from them, the solver's from cfg.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	cfg, err := ConfigFromStats(cfg, st.Header)
	if err != nil {
		return nil, err
	}
	cfg.defaults()
	if st.Header.Phase != 2 {
		return nil, fmt.Errorf("gmm: a fit needs the statistics of pass 2, not pass %d", st.Header.Phase)
	}
	d, k := st.Header.D, cfg.K
	// The whitening of the basis (pass 1 over the rows it was computed
	// from), and the mean and σ² of pass 2's own rows: the same when
	// nothing was appended to pass 2.
	basis, err := carriedSpectrum(st, &cfg)
	if err != nil {
		return nil, err
	}
	w, b, white, err := whitening(basis, d, k)
	if err != nil {
		return nil, err
	}
	own, err := carriedSpectrum(&implicit.DenseStats{Header: st.Header, Fixed: implicit.MomentsFixed(st)}, &cfg)
	if err != nil {
		return nil, err
	}
	tm := &thirdMoments{n: st.Rows, t: &solver.Sym3{K: k, Data: st.Sum("third")}, m1: st.Sum("m1")}
	if len(tm.t.Data) != len(solver.NewSym3(k).Data) || (cfg.Differing && len(tm.m1) != d) {
		return nil, fmt.Errorf("gmm: pass-2 statistics of the wrong shape for d=%d, k=%d", d, k)
	}
	return recoverModel(ctx, own, tm, w, b, white, cfg)
}
