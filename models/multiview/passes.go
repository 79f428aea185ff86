package multiview

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// TriplePlan is the two passes of the three-view method (Decompose) as
// mergeable statistics (an implicit.Planner), over the triples that Triples
// makes of the batches of rows:
//
//	pass 1: the number of triples and the cross moments Σx₁x₂ᵀ, Σx₃x₂ᵀ,
//	        Σx₃x₁ᵀ: no basis;
//	pass 2: the raw whitened third moment Σ(P₁ᵀx₁)⊗(P₂ᵀx₂)⊗(P₃ᵀx₃), for the
//	        maps of the merged pass 1, whose totals it carries (its basis).
//
// The multi-view mixture and the HMM from sequences use it.
type TriplePlan struct {
	// Header is the statistics' header (Model, D, K, Params); the passes
	// set Phase and Cols.
	Header statsfile.Header
	// Dims are the widths of the three views.
	Dims [3]int
	// Triples returns one worker's function that calls fn with the triples
	// of a batch (row i of x₁, x₂, x₃ is triple i), or with what it holds
	// at the end of an Ordered pass (b nil), and adds the groups (sequences)
	// the batch begins to *groups. It may call commit to hand on the sums of
	// the triples before (see implicit.BatchFunc).
	Triples func() func(b *stream.Dense, fn func(x1, x2, x3 blas64.General), groups *float64, commit func() error) error
	// Ordered makes the passes ordered (see implicit.Pass).
	Ordered bool
	// Fewer lets the cross moments decide how many components the passes
	// after pass 1 hold when they support fewer than Header.K (a view
	// narrower than k, cross moments of lower rank, M₂ with fewer positive
	// directions): the most they support, a function of the carried pass-1
	// totals alone, so every route finds the same. Without it such k is
	// refused.
	Fewer bool
	// Unit names what the k are in messages ("state"; "" is "component").
	Unit string
}

// unit is what the plan's k are, for messages.
func (p *TriplePlan) unit() string {
	if p.Unit == "" {
		return "component"
	}
	return p.Unit
}

func (p *TriplePlan) header(phase int) statsfile.Header {
	h := p.Header
	h.Phase, h.Cols = phase, h.K
	return h
}

// First returns pass 1 (d, the columns of the rows, is the header's).
func (p *TriplePlan) First(d int) (*implicit.Pass, error) {
	d1, d2, d3 := p.Dims[0], p.Dims[1], p.Dims[2]
	return &implicit.Pass{
		Header:  p.header(1),
		Sums:    []implicit.SumShape{{Name: "e12", Len: d1 * d2}, {Name: "e32", Len: d3 * d2}, {Name: "e31", Len: d3 * d1}, {Name: "triples", Len: 1}, {Name: "groups", Len: 1}},
		Ordered: p.Ordered,
		Worker: func() implicit.BatchFunc {
			triples := p.Triples()
			return func(b *stream.Dense, out [][]float64, commit func() error) error {
				return triples(b, func(x1, x2, x3 blas64.General) {
					blas64.Gemm(blas.Trans, blas.NoTrans, 1, x1, x2, 1, blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: out[0]})
					blas64.Gemm(blas.Trans, blas.NoTrans, 1, x3, x2, 1, blas64.General{Rows: d3, Cols: d2, Stride: d2, Data: out[1]})
					blas64.Gemm(blas.Trans, blas.NoTrans, 1, x3, x1, 1, blas64.General{Rows: d3, Cols: d1, Stride: d1, Data: out[2]})
					out[3][0] += float64(x1.Rows)
				}, &out[4][0], commit)
			}
		},
	}, nil
}

// Next returns pass 2 after the merged pass-1 statistics st, or nil after
// pass 2.
func (p *TriplePlan) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	if st.Header.Phase >= 2 {
		return nil, nil
	}
	fixed := []implicit.Fixed{{Name: "e12", Values: st.Sum("e12")}, {Name: "e32", Values: st.Sum("e32")}, {Name: "e31", Values: st.Sum("e31")}, {Name: "triples", Values: st.Sum("triples")}}
	return p.pass2(fixed)
}

// Like returns pass 1, to add rows to pass-1 statistics st; pass 2 recovers
// the views' means from the cross moments of pass 1 it carries, so rows
// appended to it would not count there (implicit.ErrNoAppend).
func (p *TriplePlan) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	if st.Header.Phase == 1 {
		return p.First(st.Header.D)
	}
	return nil, fmt.Errorf("%s pass %d: %w", p.Header.Model, st.Header.Phase, implicit.ErrNoAppend)
}

// Basis returns the whitening of view 3 that pass 2 after the pass-1
// statistics st uses, or that the pass-2 statistics st used.
func (p *TriplePlan) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	var cs *crossStage
	var err error
	if st.Header.Phase == 1 {
		cs, err = p.stage([]implicit.Fixed{{Name: "e12", Values: st.Sum("e12")}, {Name: "e32", Values: st.Sum("e32")}, {Name: "e31", Values: st.Sum("e31")}, {Name: "triples", Values: st.Sum("triples")}})
	} else {
		cs, err = p.stage(st.Fixed)
	}
	if err != nil {
		return nil, err
	}
	return cs.wm, nil
}

// stage is the cross stage of the carried pass-1 totals fixed.
func (p *TriplePlan) stage(fixed []implicit.Fixed) (*crossStage, error) {
	st := implicit.DenseStats{Fixed: fixed}
	d1, d2, d3 := p.Dims[0], p.Dims[1], p.Dims[2]
	e12, e32, e31, n := st.Get("e12"), st.Get("e32"), st.Get("e31"), st.Get("triples")
	if len(e12) != d1*d2 || len(e32) != d3*d2 || len(e31) != d3*d1 || len(n) != 1 {
		return nil, fmt.Errorf("multiview: the statistics do not carry the cross moments of pass 1 for views of %v columns", p.Dims)
	}
	if n[0] < 1 {
		return nil, fmt.Errorf("multiview: no triples")
	}
	avg := func(r, c int, v []float64) *mat.Dense {
		m := mat.NewDense(r, c, append([]float64(nil), v...))
		m.Scale(1/n[0], m)
		return m
	}
	a12, a32, a31 := avg(d1, d2, e12), avg(d3, d2, e32), avg(d3, d1, e31)
	if !p.Fewer {
		return newCrossStage(a12, a32, a31, int64(n[0]), p.Header.K)
	}
	narrow := "a view is narrower than k"
	if d1 == d2 && d2 == d3 {
		narrow = fmt.Sprintf("k=%d exceeds the dimension d=%d", p.Header.K, d1)
	}
	cs, got, why, err := models.FitFewer(p.Header.K, min(d1, d2, d3), narrow, func(k int) (*crossStage, error) {
		return newCrossStage(a12, a32, a31, int64(n[0]), k)
	})
	if err == nil && got == 0 {
		err = fmt.Errorf("%s: the cross moments support not one %s (%s): the rows carry nothing the moments can use (are they all zero?)", p.Header.Model, p.unit(), why)
	}
	return cs, err
}

// kOf is the number of components of the cross stage cs.
func (cs *crossStage) kOf() int {
	_, k := cs.wm.Dims()
	return k
}

// pass2 returns pass 2 for the carried pass-1 totals fixed.
func (p *TriplePlan) pass2(fixed []implicit.Fixed) (*implicit.Pass, error) {
	cs, err := p.stage(fixed)
	if err != nil {
		return nil, err
	}
	k := cs.kOf()
	return &implicit.Pass{
		Header:  p.header(2),
		Sums:    []implicit.SumShape{{Name: "t", Len: k * k * k}, {Name: "triples", Len: 1}, {Name: "groups", Len: 1}},
		Fixed:   fixed,
		Ordered: p.Ordered,
		Worker: func() implicit.BatchFunc {
			triples := p.Triples()
			var sc tripleScratch
			return func(b *stream.Dense, out [][]float64, commit func() error) error {
				return triples(b, func(x1, x2, x3 blas64.General) {
					sc.add(x1, x2, x3, cs.p1t, cs.p2t, cs.wm, out[0])
					out[1][0] += float64(x1.Rows)
				}, &out[2][0], commit)
			}
		},
	}, nil
}

// DecomposeStats is Decompose from the merged pass-2 statistics st of p.
func (p *TriplePlan) DecomposeStats(ctx context.Context, st *implicit.DenseStats, opt Options) (*Decomposition, error) {
	if st.Header.Phase != 2 {
		return nil, fmt.Errorf("a fit needs the statistics of pass 2, not pass %d", st.Header.Phase)
	}
	if opt.Solver == "" {
		opt.Solver = "rtpm"
	}
	solve, err := solver.ByName(opt.Solver)
	if err != nil {
		return nil, fmt.Errorf("multiview: %w", err)
	}
	cs, err := p.stage(st.Fixed)
	if err != nil {
		return nil, err
	}
	k := cs.kOf()
	raw, n := st.Sum("t"), st.Sum("triples")
	if len(raw) != k*k*k || len(n) != 1 {
		return nil, fmt.Errorf("multiview: pass-2 statistics of the wrong shape for k=%d", k)
	}
	if int64(n[0]) != cs.n {
		return nil, fmt.Errorf("multiview: the source changed between passes (%d triples, then %d)", cs.n, int64(n[0]))
	}
	opt.K = k
	return cs.recover(ctx, solve, symmetrised(raw, cs.n, k), opt)
}

// params are the settings of a multi-view fit its statistics depend on.
type params struct {
	Views  [][]int `json:"views"`
	Rotate bool    `json:"rotate,omitempty"`
	Seed   uint64  `json:"seed,omitempty"` // of the rotation
}

// Plan is the passes of a multi-view fit with Config (see Planner); Path
// names the input in errors.
type Plan struct {
	Config Config
	Path   string
}

// ConfigFromStats returns cfg with the settings the statistics' header h
// fixes (K, Views, Rotate and, with Rotate, the Seed of the rotation).
func ConfigFromStats(cfg Config, h statsfile.Header) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, "multiview"); err != nil {
		return cfg, fmt.Errorf("multiview: %w", err)
	}
	cfg.K, cfg.Views, cfg.Rotate, cfg.RandomViews = h.K, p.Views, p.Rotate, false
	if p.Rotate {
		cfg.Seed = p.Seed
	}
	return cfg, nil
}

// triplePlan returns the three-view passes over rows of d columns.
func (p *Plan) triplePlan(d int) (*TriplePlan, error) {
	cfg := p.Config
	views, err := cfg.views(d)
	if err != nil {
		return nil, err
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	pr := params{Views: views, Rotate: cfg.Rotate}
	var rot *mat.Dense
	if cfg.Rotate {
		pr.Seed = cfg.Seed
		rot = Rotation(d, cfg.Seed)
	}
	pj, _ := json.Marshal(pr)
	dims := [3]int{len(views[0]), len(views[1]), len(views[2])}
	if cfg.K < 1 {
		return nil, fmt.Errorf("multiview: k=%d, need at least one component", cfg.K)
	}
	path := p.Path
	return &TriplePlan{
		Header: statsfile.Header{Model: "multiview", D: d, K: cfg.K, Params: pj},
		Dims:   dims,
		// Real data may hold fewer classes than asked: the fit takes as
		// many as the cross moments support, with a warning (FitStats).
		Fewer: true,
		Triples: func() func(*stream.Dense, func(x1, x2, x3 blas64.General), *float64, func() error) error {
			v := newViewCutter(path, d, views, rot)
			return func(b *stream.Dense, fn func(x1, x2, x3 blas64.General), _ *float64, _ func() error) error {
				xs, err := v.cut(b)
				if err != nil || b.Rows == 0 {
					return err
				}
				fn(xs[0], xs[1], xs[2])
				return nil
			}
		},
	}, nil
}

// Planner returns the passes of the fit as an implicit.Planner.
func (p *Plan) Planner() Triples {
	return TriplesOf(p.Config, ConfigFromStats, func(c Config, d int) (*TriplePlan, error) {
		return (&Plan{Config: c, Path: p.Path}).triplePlan(d)
	})
}

// TriplesOf returns the Triples of a model with settings cfg, whose
// statistics' headers fix some of them (fromStats), and whose passes for
// rows of d columns build returns.
func TriplesOf[C any](cfg C, fromStats func(C, statsfile.Header) (C, error), build func(cfg C, d int) (*TriplePlan, error)) Triples {
	return Triples{Build: func(h *statsfile.Header, d int) (*TriplePlan, error) {
		c := cfg
		if h != nil {
			var err error
			if c, err = fromStats(cfg, *h); err != nil {
				return nil, err
			}
		}
		return build(c, d)
	}}
}

// Triples is an implicit.Planner whose passes are the TriplePlan that Build
// returns for rows of d columns, with the settings the header h of earlier
// statistics fixes (h nil: the first pass, with the model's own settings).
type Triples struct {
	Build func(h *statsfile.Header, d int) (*TriplePlan, error)
}

// First returns pass 1 for rows of d columns.
func (t Triples) First(d int) (*implicit.Pass, error) {
	tp, err := t.Build(nil, d)
	if err != nil {
		return nil, err
	}
	return tp.First(d)
}

// Next returns the pass after st, or nil after pass 2.
func (t Triples) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	tp, err := t.Build(&st.Header, st.Header.D)
	if err != nil {
		return nil, err
	}
	return tp.Next(ctx, st)
}

// Like returns the pass whose statistics st are (see TriplePlan.Like).
func (t Triples) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	tp, err := t.Build(&st.Header, st.Header.D)
	if err != nil {
		return nil, err
	}
	return tp.Like(ctx, st)
}

// Basis returns the whitening of view 3 (see TriplePlan.Basis).
func (t Triples) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	tp, err := t.Build(&st.Header, st.Header.D)
	if err != nil {
		return nil, err
	}
	return tp.Basis(ctx, st)
}
