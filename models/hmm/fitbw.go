package hmm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// DefaultEMPasses and DefaultEMTol are the Baum–Welch passes' cap and
// stopping gain (in log-likelihood per row) of the default fit of
// discrete observations (DefaultConfig, `streamfit fit hmm --discrete`).
// On English text the passes converge by this rule in 70–90 passes at 5
// and 10 states and in about 150 at 20, where the moments give only some
// of the states and the others start as copies that separate slowly; a
// cap of 100 stopped those still gaining, 1% below pomegranate's
// Baum–Welch (bench/dense/RESULTS.md). Fits that converge sooner stop
// sooner: the cap only bounds the slow ones.
const (
	DefaultEMPasses = 200
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
	em.Workers = cfg.Workers
	c := cfg
	c.EM = nil
	// Real data may support fewer states than k in the moments (the
	// symbols, the second moment's positive directions): fit those, and
	// let the passes separate the rest from copies of them.
	most := cfg.K
	if d := src.Info().Cols; d > 0 {
		most = d
	}
	mom, got, why, err := models.FitFewer(cfg.K, most, fmt.Sprintf("k=%d exceeds the d=%d symbols", cfg.K, most), func(k int) (*Model, error) {
		c.K = k
		return Fit(ctx, src, c)
	})
	switch {
	case err != nil:
		return nil, err
	case got == 0:
		return nil, fmt.Errorf("hmm: the moments give none of the %d states (%s)", cfg.K, why)
	}
	start := Start(mom, em)
	if mom.K < cfg.K {
		start = splitStates(start, cfg.K, cfg.Seed)
	}
	r, err := Refine(ctx, src, start, em)
	if err != nil {
		return nil, fmt.Errorf("hmm: Baum–Welch: %w", err)
	}
	m := bwModel(mom, r)
	if mom.K < cfg.K {
		m.Fit.Warnings = append(m.Fit.Warnings, fmt.Sprintf("the moments give %d of the %d states (%s); Baum–Welch starts the other %d as perturbed copies of the most likely ones", mom.K, cfg.K, why, cfg.K-mom.K))
	}
	m.Fit.Seconds = time.Since(t0).Seconds()
	return m, nil
}

// splitStates returns m with k states: each state added is a copy of one
// of m's, in decreasing order of their share of the starting distribution,
// the copy and its original sharing the original's probability of being
// entered, and both emissions moved apart by a seeded perturbation of 5%
// (identical states would stay identical under Baum–Welch).
func splitStates(m *Model, k int, seed uint64) *Model {
	k0 := m.K
	order := make([]int, k0)
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Pi[order[a]] > m.Pi[order[b]] })
	parent := make([]int, k) // parent[s]: the original state s copies
	share := make([]float64, k0)
	for s := range k {
		parent[s] = s
		if s >= k0 {
			parent[s] = order[(s-k0)%k0]
		}
		share[parent[s]]++
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5))
	out := &Model{Model: m.Model, K: k, D: m.D, O: make([][]float64, k), T: make([][]float64, k), Pi: make([]float64, k)}
	for s := range k {
		p := parent[s]
		row := make([]float64, m.D)
		sum := 0.0
		for w, v := range m.O[p] {
			row[w] = v * (1 + 0.05*(2*rng.Float64()-1))
			sum += row[w]
		}
		for w := range row {
			row[w] /= sum
		}
		out.O[s] = row
		out.Pi[s] = m.Pi[p] / share[p]
		out.T[s] = make([]float64, k)
		for j := range k { // T[s][j] = Pr(next = s | current = j)
			out.T[s][j] = m.T[p][parent[j]] / share[p]
		}
	}
	return out
}

// bwModel is the model of Baum–Welch passes r from the moment fit mom:
// r's parameters, and the moment fit's record with the passes'.
func bwModel(mom *Model, r *Refined) *Model {
	m := r.Model
	m.Fit = mom.Fit
	m.Fit.EM = r.BW
	return m
}
