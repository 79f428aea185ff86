package hmm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// DefaultEMPasses and DefaultEMTol are the Baum–Welch passes' cap and
// stopping gain (in log-likelihood per row) of the default fit of
// discrete observations (DefaultConfig, `streamfit fit hmm --discrete`):
// the settings of bench/dense/RESULTS.md.
const (
	DefaultEMPasses = 50
	DefaultEMTol    = 1e-4
)

// DefaultConfig is the configuration of the command line's default fit of
// k states from one-hot symbols: seed 1, the moment fit refined by up to
// DefaultEMPasses Baum–Welch passes. Set EM to nil for the moment fit
// alone (the only fit of observations that are not one-hot).
func DefaultConfig(k int) Config {
	return Config{K: k, Discrete: true, Seed: 1, EM: &BWConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}}
}

// fitBW is Fit with cfg.EM set: the moment fit, made a distribution
// (Start), then Baum–Welch passes (Refine). The record is the moment
// fit's with the passes' (FitRecord.EM).
func fitBW(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	t0 := time.Now()
	if !cfg.Discrete {
		return nil, errors.New("hmm: Baum–Welch passes need one-hot observations (Config.Discrete); fit Gaussian observations by the moments alone")
	}
	em := *cfg.EM
	c := cfg
	c.EM = nil
	mom, err := Fit(ctx, src, c)
	if err != nil {
		return nil, err
	}
	r, err := Refine(ctx, src, Start(mom, em), em)
	if err != nil {
		return nil, fmt.Errorf("hmm: Baum–Welch: %w", err)
	}
	m := bwModel(mom, r)
	m.Fit.Seconds = time.Since(t0).Seconds()
	return m, nil
}

// bwModel is the model of Baum–Welch passes r from the moment fit mom:
// r's parameters, and the moment fit's record with the passes'.
func bwModel(mom *Model, r *Refined) *Model {
	m := r.Model
	m.Fit = mom.Fit
	m.Fit.EM = r.BW
	return m
}
