package gmm

import (
	"context"
	"fmt"
	"runtime/pprof"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// fitEM is Fit with cfg.EM set: the moment fit with a variance per
// component (unless cfg.Sigma2 is given; at the largest k ≤ cfg.K it
// gives), the start of the EM passes from it (Start: the components
// it does not give at sample rows) and the passes (Refine). The model
// has a variance per component; its record is the moment fit's with the
// passes' (FitRecord.EM), and a warning when the moments gave fewer than
// cfg.K components. With cfg.EM.Diag the passes fit, and the model has, a
// variance per component and feature.
func fitEM(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	t0 := time.Now()
	d := src.Info().Cols
	if d <= 0 {
		return nil, fmt.Errorf("gmm: the source does not report its number of columns")
	}
	if cfg.K < 1 {
		return nil, fmt.Errorf("gmm: k=%d, need at least one component", cfg.K)
	}
	em := emSettings(cfg)
	mom, warn, err := momentStart(ctx, src, cfg, d)
	if err != nil {
		return nil, err
	}
	start, err := Start(ctx, src, mom, cfg.K, em)
	if err != nil {
		return nil, err
	}
	var mix *Mixture
	err = stage(ctx, "em", func(ctx context.Context) (err error) {
		mix, err = Refine(ctx, src, start, em)
		return err
	})
	if err != nil {
		return nil, err
	}
	m := emModel(mom, warn, mix, cfg.Solver)
	m.Fit.Seconds = time.Since(t0).Seconds()
	return m, nil
}

// emSettings are the settings of the EM passes of a fit with cfg (cfg.EM
// set): its seed and workers are the fit's.
func emSettings(cfg Config) EMConfig {
	em := *cfg.EM
	em.Seed, em.Workers = cfg.Seed, max(cfg.Workers, 1)
	return em
}

// emModel is the model of EM passes that ended at mix, from the moment
// fit mom (nil: none) with its warning warn: mix's parameters, and the
// moment fit's record with the passes'.
func emModel(mom *Model, warn string, mix *Mixture, solver string) *Model {
	m := mix.Fitted()
	rec := &FitRecord{Rows: mix.EM.Rows, Method: "none", Solver: solver}
	if mom != nil {
		rec = mom.Fit
	}
	if warn != "" {
		rec.Warnings = append(rec.Warnings, warn)
	}
	rec.EM = mix.EM
	m.Fit = rec
	return m
}

// momentConfig is the moment fit EM passes start from: a variance per
// component (the start the passes refine best, bench/dense/RESULTS.md)
// unless the common one is known.
func momentConfig(cfg Config) Config {
	c := cfg
	c.EM = nil
	c.Differing = c.Differing || c.Sigma2 == 0
	return c
}

// momentStart returns the moment fit of cfg.K components, or when the
// moments do not give that many, of the largest k they give (nil when
// none), with the warning that says so. Other errors (the rows') are
// returned.
func momentStart(ctx context.Context, src stream.DenseSource, cfg Config, d int) (*Model, string, error) {
	c := momentConfig(cfg)
	m, got, why, err := models.FitFewer(cfg.K, d, fmt.Sprintf("k=%d exceeds the dimension d=%d", cfg.K, d), func(k int) (*Model, error) {
		c.K = k
		var m *Model
		err := stage(ctx, fmt.Sprintf("moments-k%d", k), func(ctx context.Context) (err error) {
			m, err = Fit(ctx, src, c)
			return err
		})
		return m, err
	})
	switch {
	case err != nil:
		return nil, "", err
	case got == cfg.K:
		return m, "", nil
	case got == 0:
		return nil, fmt.Sprintf("the moments give none of the %d components (%s); EM starts them at sample rows", cfg.K, why), nil
	}
	return m, fmt.Sprintf("the moments give %d of the %d components (%s); EM starts the other %d at sample rows", got, cfg.K, why, cfg.K-got), nil
}

// stage runs f with the CPU profiler label stage=name, which the
// goroutines f starts inherit, so `go tool pprof -tagfocus stage=NAME` (or
// -tags) splits a profile of a fit (streamfit fit --cpuprofile) by step:
// the moment fits tried, the sample, the starts refined on it, the passes.
func stage(ctx context.Context, name string, f func(context.Context) error) error {
	var err error
	pprof.Do(ctx, pprof.Labels("stage", name), func(ctx context.Context) { err = f(ctx) })
	return err
}
