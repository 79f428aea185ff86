package hmm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// DefaultEMPasses and DefaultEMTol are the Baum–Welch passes' cap and
// stopping gain (in log-likelihood per row) of the default fit
// (DefaultConfig, `streamfit fit hmm`, of symbols or Gaussian states).
// On English text the passes converge by this rule in 70–90 passes at 5
// and 10 states and in about 150 at 20, where the moments give only some
// of the states and the others start as copies that separate slowly; a
// cap of 100 stopped those still gaining, 1% below pomegranate's
// Baum–Welch (bench/dense/RESULTS.md). Fits that converge sooner stop
// sooner: the cap only bounds the slow ones (Gaussian states of generated
// sequences converge in a handful of passes: gaussian_test.go).
const (
	DefaultEMPasses = 200
	DefaultEMTol    = 1e-4
)

// DefaultConfig is the configuration of the command line's default fit of
// k states from one-hot symbols: seed 1, the moment fit refined by up to
// DefaultEMPasses Baum–Welch passes. Set EM to nil for the moment fit
// alone; Discrete false for Gaussian observations (`streamfit fit hmm`
// without --discrete), refined as well.
func DefaultConfig(k int) Config {
	return Config{K: k, Discrete: true, Seed: 1, EM: &BWConfig{Passes: DefaultEMPasses, Tol: DefaultEMTol}}
}

// fitBW is Fit with cfg.EM set: the moment fit, made a distribution
// (Start), then Baum–Welch passes (Refine): of one-hot symbols with
// cfg.Discrete, else of Gaussian states, whose variances a first pass
// starts (GaussianStartPass). The record is the moment fit's with the
// passes' (FitRecord.EM).
func fitBW(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	t0 := time.Now()
	em := *cfg.EM
	em.Workers = cfg.Workers
	em.Gaussian = !cfg.Discrete
	c := cfg
	c.EM = nil
	// Real data may support fewer states than k in the moments (the
	// symbols, the cross moments' rank): the moment fit has those (its
	// plan steps k down), and the passes separate the rest from copies of
	// them.
	mom, err := Fit(ctx, src, c)
	if err != nil {
		return nil, err
	}
	r, err := Refine(ctx, src, startOf(mom, cfg.K, cfg.Seed, em), em)
	if err != nil {
		return nil, fmt.Errorf("hmm: Baum–Welch: %w", err)
	}
	m := bwModel(mom, r, cfg.K)
	m.Fit.Seconds = time.Since(t0).Seconds()
	return m, nil
}

// startOf is the start of the Baum–Welch passes of a fit of k states from
// the moment fit mom: mom made a distribution (Start), with the states it
// lacks added as copies (splitStates).
func startOf(mom *Model, k int, seed uint64, em BWConfig) *Model {
	start := Start(mom, em)
	if mom.K < k {
		start = splitStates(start, k, seed, em.Gaussian)
	}
	return start
}

// splitStates returns m with k states: each state added is a copy of one
// of m's, in decreasing order of their share of the starting distribution,
// the copy and its original sharing the original's probability of being
// entered, and both emissions moved apart by a seeded perturbation of 5%
// (identical states would stay identical under Baum–Welch). Gaussian
// means (gauss) move by up to 5% of the root mean square of all the
// means' entries, added to each entry, and are not renormalised.
func splitStates(m *Model, k int, seed uint64, gauss bool) *Model {
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
	var rms float64
	if gauss {
		for _, o := range m.O {
			for _, v := range o {
				rms += v * v
			}
		}
		rms = math.Sqrt(rms / float64(k0*m.D))
	}
	for s := range k {
		p := parent[s]
		row := make([]float64, m.D)
		sum := 0.0
		for w, v := range m.O[p] {
			if gauss {
				row[w] = v + 0.05*rms*(2*rng.Float64()-1)
				continue
			}
			row[w] = v * (1 + 0.05*(2*rng.Float64()-1))
			sum += row[w]
		}
		for w := range row {
			if !gauss {
				row[w] /= sum
			}
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

// bwModel is the model of Baum–Welch passes r from the moment fit mom of
// asked states: r's parameters, and the moment fit's record with the
// passes'. When the moments gave fewer states, their warning says how
// the passes started the others.
func bwModel(mom *Model, r *Refined, asked int) *Model {
	m := r.Model
	m.Fit = mom.Fit
	m.Fit.EM = r.BW
	if mom.K < asked {
		// The moment fit's own warning (its reason names symbols or the
		// dimension, as the rows were) loses "the model has" and says how
		// the passes started the others.
		bw := fmt.Sprintf("; Baum–Welch starts the other %d as perturbed copies of the most likely ones", asked-mom.K)
		head := fmt.Sprintf("the moments give %d of the %d states (", mom.K, asked)
		i := slices.IndexFunc(m.Fit.Warnings, func(s string) bool { return strings.HasPrefix(s, head) })
		if i >= 0 {
			m.Fit.Warnings[i] = strings.TrimSuffix(m.Fit.Warnings[i], fmt.Sprintf("; the model has %d", mom.K)) + bw
		} else {
			m.Fit.Warnings = append(m.Fit.Warnings, fewerStates(asked, mom.K, mom.D, m.Var == nil && m.VarDiag == nil)+bw)
		}
	}
	return m
}
