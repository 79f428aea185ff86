package lda

import (
	"context"
	"errors"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// ErrTooManyTopics reports that the data support fewer topics than asked for:
// the corrected second moment has fewer than k positive eigenvalues, or the
// whitened third moment fewer than k positive eigenvalues.
var ErrTooManyTopics = errors.New("k is larger than the data support")

// Fit learns an LDA (or, with cfg.Single, a single-topic) model from src in
// two passes (plus cfg.PowerIters, or with PowerIters 0 one automatic power
// pass when the first sketch does not decay; see Config.PowerIters):
//
//  1. pass 1 accumulates the document counts, M̂1 and Ê2·Ω for a seeded
//     sparse sign test matrix Ω of k+oversample columns (the identity for a
//     vocabulary of at most ExactDim words), never M2 itself; the top-k left
//     singular vectors Q of the sketch M2·Ω span the topics (the range
//     finder; exact eigenvectors for a small vocabulary), and W = Q D^{-1/2}
//     whitens M2 approximately (MATH §4.1);
//  2. pass 2 accumulates the whitened third moment, corrected for LDA (MATH
//     §3.5), in the representation cfg.Third names (the packed k×k×k
//     tensor, a tensor sketch, or the whitened rows on disk; Auto asks
//     PlanSource), together with Ê2·W; WᵀM̂2W from the same pass re-whitens
//     the tensor exactly (W → W·P, P = (WᵀM̂2W)^{-1/2}, a k×k change of
//     basis), so W need only span the topics well;
//  3. the tensor decomposition (RTPM for the explicit tensor, the
//     simultaneous power method for the others, where a contraction is a
//     pass over the rows or a set of FFTs) finds the eigenpairs (λᵢ, vᵢ),
//     and μᵢ = (α₀+2)/2·λᵢ·M̂2WP·vᵢ, αᵢ = 4α₀(α₀+1)/((α₀+2)²λᵢ²) (MATH
//     §4.4, with (Wᵀ)⁺ replaced by M̂2·W, which equals it when W spans the
//     top-k eigenspace exactly and otherwise maps back through the measured
//     second moment instead of projecting the topics onto span(W):
//     M2·W·vᵢ = √wᵢ·μᵢ holds for any W with WᵀM2W = I); each topic is
//     projected onto the simplex and the topics are ordered by weight.
//
// With the explicit tensor, Fit is the same computation as
// FitStats(Phase2Stats(Phase1Stats(src))) on one shard
// (FitStats(Phase2Stats(PowerStats(Phase1Stats(src)))) when Fit takes a
// power pass) and gives the same model up to the last bits: the statistics
// hold exact totals where Fit sums in batch order. The same source, cfg.Seed and representation give an
// identical model whatever cfg.Workers.
func Fit(ctx context.Context, src stream.DocSource, cfg Config) (*models.Model, error) {
	start := time.Now()
	info := src.Info()
	d := info.Terms
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return nil, err
	}
	if cfg.Checkpoint.Dir != "" {
		unlock, err := lockCheckpoints(cfg.Checkpoint.Dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	var plan *Plan
	if cfg.Third == Auto || cfg.OnPlan != nil {
		plan, err = PlanSource(ctx, src, cfg)
	} else {
		// Nobody reads the prediction: no sample read for the entries.
		plan, err = PlanFit(info, cfg)
	}
	if err != nil {
		return nil, err
	}
	if cfg.OnPlan != nil {
		cfg.OnPlan(plan)
	}
	if err := plan.machineFits(info); err != nil {
		return nil, err
	}
	cfg = plan.apply(cfg)
	track := newTracker(cfg)
	omega := sketchMatrix(d, cfg)
	p1, err := pairPass(ctx, src, omega, cfg, track)
	if err != nil {
		return nil, err
	}
	var b *basis
	if err := stage(ctx, "whitening", func(ctx context.Context) (err error) {
		b, err = whitening(ctx, p1, omega, cfg, src, track, true)
		return err
	}); err != nil {
		return nil, err
	}
	if r := plan.Revise(b.passes + 1); r != nil && cfg.OnPlan != nil {
		cfg.OnPlan(r) // the automatic power pass was taken
	}
	th, err := thirdPass(ctx, src, b.w, cfg, track)
	if err != nil {
		return nil, err
	}
	defer th.close()
	th.track = track
	var m *models.Model
	if err := stage(ctx, "solve", func(ctx context.Context) (err error) {
		m, err = solveThird(ctx, th, b, cfg)
		return err
	}); err != nil {
		return nil, err
	}
	m.Vocab = info.Vocab
	m.Fit.Passes = track.passes
	m.Fit.Plan = plan.Record()
	m.Fit.Seconds = time.Since(start).Seconds()
	return m, nil
}

// thirdPass runs the second pass into the representation cfg.Third: the
// explicit triple statistics (triplePass), or statistics without cubes
// whose row hook sketches the rows or stores them on disk.
func thirdPass(ctx context.Context, src stream.DocSource, w *mat.Dense, cfg Config, track *tracker) (*third, error) {
	d, k := w.Dims()
	th := &third{}
	switch cfg.Third {
	case Sketch:
		b, count := cfg.sketchSize()
		th.sketch = implicit.NewSketchAcc(d, k, implicit.SketchConfig{Len: b, Count: count, Seed: cfg.Seed})
		th.acc = th.sketch.TripleAcc
	case Rows:
		rows, err := implicit.NewRowAcc(d, k, cfg.RowDir, implicit.RowStoreOptions{Workers: cfg.Workers})
		if err != nil {
			return nil, err
		}
		th.rows, th.acc = rows, rows.TripleAcc
	default:
		acc, err := triplePass(ctx, src, w, cfg, track)
		if err != nil {
			return nil, err
		}
		th.acc = acc
		return th, nil
	}
	th.acc.Float32 = !cfg.float64Sums
	if err := runThird(ctx, src, th.acc, w, cfg, track); err != nil {
		th.close()
		return nil, err
	}
	return th, nil
}

// runThird runs acc's pass over src as the third-moment pass of the fit.
func runThird(ctx context.Context, src stream.DocSource, acc *implicit.TripleAcc, w *mat.Dense, cfg Config, track *tracker) error {
	pass := track.begin()
	if err := stage(ctx, passLabel(pass, "third-moment"), func(ctx context.Context) error {
		return acc.Pass(ctx, src.Docs, cfg.Workers, w, func(n int) { track.report(pass, "third-moment", n, false) })
	}); err != nil {
		return err
	}
	track.report(pass, "third-moment", 0, true)
	return nil
}
