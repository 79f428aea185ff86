package gmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

func init() { models.RegisterRefinement(Kind, refinement) }

// emRefinement is the EM passes of a fit (Config.EM) as a
// models.Refinement, for a pipeline that runs a stage per pass: the
// moment fit of momentConfig from its merged statistics, Start, then
// EMPass and MStep with the stopping rule of Refine, so the model is
// Fit's over the same rows.
type emRefinement struct {
	cfg Config
	em  EMConfig
}

// refinement returns the EM passes of a fit with cfg, or nil for the
// moment fit alone.
func refinement(cfg Config) models.Refinement {
	if cfg.EM == nil {
		return nil
	}
	em := emSettings(cfg)
	em.defaults()
	return &emRefinement{cfg: cfg, em: em}
}

// emState is the state between the passes: the moment fit (nil: none)
// with its warning, the mixture so far with the record of the passes
// (Mix.EM), and the rows the last pass read.
type emState struct {
	Moment *Model   `json:"moment,omitempty"`
	Warn   string   `json:"warn,omitempty"`
	Mix    *Mixture `json:"mix"`
	Rows   int64    `json:"rows"`
}

// Moments implements models.Refinement.
func (r *emRefinement) Moments() models.Passes {
	c := momentConfig(r.cfg)
	c.atDim = true
	return Kind.Passes(c)
}

// Cap implements models.Refinement.
func (r *emRefinement) Cap() int { return r.em.Passes }

// Start implements models.Refinement: the moment fit of the merged
// statistics st, and the mixture Start places from it (sampling rows). A
// k above the dimension d was fitted at d components (Moments), and Start
// places the others at sample rows, with a warning. When the moments do
// not give their components, every component starts at sample rows, with
// a warning: a pipeline's passes are fixed before it runs, so it cannot
// fit the moments again at a smaller k as Fit does.
func (r *emRefinement) Start(ctx context.Context, st *implicit.DenseStats, rows stream.DenseSource) ([]byte, error) {
	mom, err := FitStats(ctx, st, momentConfig(r.cfg))
	var warn string
	var short *models.ShortError
	switch {
	case errors.As(err, &short):
		mom, warn = nil, fmt.Sprintf("the moments do not give the %d components (%v); EM starts them at sample rows", r.cfg.K, err)
	case err != nil:
		return nil, err
	case mom.K < r.cfg.K:
		warn = fmt.Sprintf("the moments give %d of the %d components (k=%d exceeds the dimension d=%d); EM starts the other %d at sample rows", mom.K, r.cfg.K, r.cfg.K, mom.D, r.cfg.K-mom.K)
	}
	mix, err := Start(ctx, rows, mom, r.cfg.K, r.em)
	if err != nil {
		return nil, err
	}
	mix.EM = &EMRun{Tol: r.em.Tol, Started: mix.EM.Started}
	return json.Marshal(emState{Moment: mom, Warn: warn, Mix: mix})
}

// state decodes b.
func (r *emRefinement) state(b []byte) (*emState, error) {
	var s emState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("gmm: EM state: %w", err)
	}
	if s.Mix == nil || s.Mix.EM == nil {
		return nil, errors.New("gmm: EM state without a mixture")
	}
	s.Mix.EM.Rows = s.Rows
	return &s, nil
}

// done reports whether the passes of s have ended.
func (r *emRefinement) done(s *emState) bool {
	return s.Mix.EM.Converged || s.Mix.EM.Passes >= r.em.Passes
}

// Pass implements models.Refinement.
func (r *emRefinement) Pass(state []byte, path string) (*implicit.Pass, error) {
	s, err := r.state(state)
	if err != nil || r.done(s) {
		return nil, err
	}
	return EMPass(s.Mix, r.em.VarFloor, s.Mix.EM.Passes+1, path), nil
}

// Step implements models.Refinement.
func (r *emRefinement) Step(state []byte, st *implicit.DenseStats) ([]byte, error) {
	s, err := r.state(state)
	if err != nil {
		return nil, err
	}
	next, ll, err := MStep(s.Mix, st, r.em.VarFloor)
	if err != nil {
		return nil, err
	}
	next.EM.record(ll, st.Rows, r.em.Tol)
	s.Mix, s.Rows = next, st.Rows
	return json.Marshal(s)
}

// Model implements models.Refinement.
func (r *emRefinement) Model(state []byte) (models.Fitted, error) {
	s, err := r.state(state)
	if err != nil {
		return nil, err
	}
	return emModel(s.Moment, s.Warn, s.Mix, r.cfg.Solver), nil
}
