package hmm

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

// bwRefinement is the Baum–Welch passes of a fit (Config.EM) as a
// models.Refinement, for a pipeline that runs a stage per pass: the moment
// fit from its merged statistics, Start, then BWPass and BWStep with the
// stopping rule of Refine, so the model is Fit's over the same sequences.
// Of Gaussian observations, the first pass is the variances' start
// (GaussianStartPass, GaussianStartStep; with BWConfig.Diag
// GaussianDiagStartPass), as in Refine.
type bwRefinement struct {
	cfg Config
	bw  BWConfig
}

// refinement returns the Baum–Welch passes of a fit with cfg, or nil for
// the moment fit alone.
func refinement(cfg Config) models.Refinement {
	if cfg.EM == nil {
		return nil
	}
	bw := *cfg.EM
	bw.Gaussian = !cfg.Discrete
	bw.defaults()
	return &bwRefinement{cfg: cfg, bw: bw}
}

// bwState is the state between the passes: the moment fit, and the model
// so far with the record of the passes.
type bwState struct {
	Moment *Model `json:"moment"`
	// Asked is the number of states the fit was asked for (Model's; the
	// moment fit may have fewer).
	Asked int    `json:"asked"`
	Model *Model `json:"model"`
	BW    *BWRun `json:"baum_welch"`
}

// momentConfig is the moment fit the passes start from.
func (r *bwRefinement) momentConfig() Config {
	c := r.cfg
	c.EM = nil
	return c
}

// Moments implements models.Refinement.
func (r *bwRefinement) Moments() models.Passes { return Kind.Passes(r.momentConfig()) }

// Cap implements models.Refinement: the Baum–Welch passes, and of
// Gaussian observations the variances' start.
func (r *bwRefinement) Cap() int {
	if r.bw.Gaussian {
		return r.bw.Passes + 1
	}
	return r.bw.Passes
}

// started reports whether the passes of s are Baum–Welch's: of
// Gaussian observations, once the variances have their start.
func (r *bwRefinement) started(s *bwState) bool { return !r.bw.Gaussian || s.Model.gaussian() }

// phase numbers the next Baum–Welch pass of s as Refine does.
func (r *bwRefinement) phase(s *bwState) int {
	if r.bw.Gaussian {
		return s.BW.Passes + 2
	}
	return s.BW.Passes + 1
}

// Start implements models.Refinement: the moment fit of st made a
// distribution, with the states the moments do not give added as copies
// (as Fit starts its passes); the rows are not read.
func (r *bwRefinement) Start(ctx context.Context, st *implicit.DenseStats, _ stream.DenseSource) ([]byte, error) {
	c := r.momentConfig()
	mom, err := FitStats(ctx, st, c)
	if err != nil {
		return nil, err
	}
	k := st.Header.K // the states asked, as FitStats reads them
	return json.Marshal(bwState{Moment: mom, Asked: k, Model: startOf(mom, k, c.Seed, r.bw), BW: &BWRun{Tol: r.bw.Tol}})
}

// state decodes b.
func (r *bwRefinement) state(b []byte) (*bwState, error) {
	var s bwState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("hmm: Baum–Welch state: %w", err)
	}
	if s.Moment == nil || s.Model == nil || s.BW == nil {
		return nil, errors.New("hmm: Baum–Welch state without a model")
	}
	return &s, nil
}

// Pass implements models.Refinement.
func (r *bwRefinement) Pass(state []byte, path string) (*implicit.Pass, error) {
	s, err := r.state(state)
	if err != nil || s.BW.Converged || s.BW.Passes >= r.bw.Passes {
		return nil, err
	}
	if !r.started(s) {
		return gaussianStartPass(s.Model, 1, path, r.bw.Diag), nil
	}
	return BWPass(s.Model, r.phase(s), path), nil
}

// Step implements models.Refinement.
func (r *bwRefinement) Step(state []byte, st *implicit.DenseStats) ([]byte, error) {
	s, err := r.state(state)
	if err != nil {
		return nil, err
	}
	if !r.started(s) {
		if s.Model, err = GaussianStartStep(s.Model, st); err != nil {
			return nil, err
		}
		return json.Marshal(s)
	}
	next, ll, err := BWStep(s.Model, st)
	if err != nil {
		return nil, fmt.Errorf("hmm: Baum–Welch: %w", err)
	}
	s.BW.record(ll, r.bw.Tol)
	s.Model = next
	return json.Marshal(s)
}

// Model implements models.Refinement.
func (r *bwRefinement) Model(state []byte) (models.Fitted, error) {
	s, err := r.state(state)
	if err != nil {
		return nil, err
	}
	return bwModel(s.Moment, &Refined{Model: s.Model, BW: s.BW}, s.Asked), nil
}
