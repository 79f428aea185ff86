package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// solve turns the statistics of an explicit (or, with cfg.Implicit,
// in-memory rows) third-moment pass, whitened by b, into a model.
func solve(ctx context.Context, acc *implicit.TripleAcc, b *basis, cfg Config) (*models.Model, error) {
	return solveThird(ctx, &third{acc: acc}, b, cfg)
}

// solveThird turns the statistics of the third-moment pass, whitened by b,
// into a model: re-whitening, decomposition, recovery and diagnostics
// (steps 2–3 of Fit).
func solveThird(ctx context.Context, th *third, b *basis, cfg Config) (*models.Model, error) {
	collect() // the pass's batches, before the solve allocates
	acc := th.acc
	// The W-terms in float32 as the batches' sums, whichever route (a pass
	// or merged statistics) brought acc: the routes give the same model.
	acc.Float32 = cfg.tripleFloat32()
	mom := th.mom // FitK's smaller k bring theirs (sweep.go)
	if err := stage(ctx, "moments", func(context.Context) (err error) {
		if mom == nil {
			mom, err = acc.MomentsGiven(b.w, b.e2w, cfg.Workers)
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	g := whitenedM2(mom, cfg.m2Coef())
	p, gvals, err := rewhiten(g)
	if err != nil {
		return nil, err
	}
	t, err := th.tensor(mom, b.w, p, cfg)
	if err != nil {
		return nil, err
	}
	var cubes *models.CubeSample
	if !acc.Cubes.All() && th.kind() == Explicit {
		// mom.E3 is now corrected: the moment the sample's error is
		// relative to.
		cubes = &models.CubeSample{Rate: acc.Cubes.Rate, StdErr: acc.CubeStdErr() / math.Sqrt(mom.E3.FrobeniusSq())}
	}
	t = th.reported(t)
	name := cfg.solverFor(th.kind())
	decompose, err := solver.ByName(name)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	k := cfg.K
	var res *solver.Result
	err = stage(ctx, "decompose", func(ctx context.Context) (err error) {
		res, err = decompose(ctx, t, k, solver.Options{Restarts: cfg.restartsFor(name), Iters: cfg.Iters, Seed: cfg.Seed, Refine: cfg.Refine})
		return err
	})
	if th.kind() == Sketch && ctx.Err() == nil && (err != nil || res.Unsettled > 0) {
		if err == nil {
			err = errors.New(res.Reason)
		}
		// Collision noise, not the data, is the likely cause.
		b, count := cfg.sketchSize()
		return nil, fmt.Errorf("lda: the tensor sketch of %d×%d buckets (predicted contraction error %.2g) is too coarse for k=%d: %s: %w",
			b, count, sketchError(k, b, count), k, sketchAdvice(k, count), err)
	}
	if errors.Is(err, solver.ErrNonPositive) {
		return nil, fmt.Errorf("lda: %w: the whitened third moment has fewer than k=%d positive eigenvalues; lower k: %v", ErrTooManyTopics, k, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lda: tensor decomposition: %w", err)
	}
	// M̂2·W·(P·V): the k×k change of basis first, so the vocabulary sees
	// one d×k×k product (not M̂2·W·P and then a product per topic).
	var pv mat.Dense
	pv.Mul(p, res.Factors)
	m := recoverTopics(res, pairBack(mom, &pv, cfg.m2Coef()), cfg.Alpha0, cfg.Single)
	fs := m.Fit
	fs.Solver.Name = name
	fs.Docs, fs.Skipped, fs.Tokens = acc.Docs, acc.Skipped, acc.Tokens
	fs.Seed = cfg.Seed
	fs.Whitening = "randomized"
	if b.exact {
		fs.Whitening = "exact"
	}
	fs.M2Eigenvalues = ritzValues(g, b.values)
	fs.PairFromPower = acc.NoPair
	fs.PowerFused = th.fused
	fs.SketchTail = b.tail
	fs.WhitenedM2Eigenvalues = slices.Clone(gvals)
	slices.Reverse(fs.WhitenedM2Eigenvalues)
	if fs.Warnings, err = diagnose(m, cfg, b); err != nil {
		return nil, err
	}
	if fs.CubeSample = cubes; cubes != nil {
		if w := cubeSampleWarning(cubes, fs.Solver.Residual, cfg); w != "" {
			fs.Warnings = append(fs.Warnings, w)
		}
	}
	// A solve stopped at its iteration cap is used, with a warning, unless
	// EM passes follow: they need a start, not an exact decomposition (on
	// real text the simultaneous start never settles, and a warning on
	// every default fit would say nothing; fit.solver.converged still
	// records it).
	if cfg.EM.Passes == 0 {
		var conv models.Convergence
		conv.Record("", res)
		fs.Warnings = append(fs.Warnings, conv.Warnings...)
	}
	return m, nil
}

// third is the statistics of a third-moment pass in one of the
// representations of Config.Third: the TripleAcc's sums (always; without
// the cubes Y3 unless explicit) and the rows' cubes kept elsewhere, as a
// tensor sketch or as rows on disk.
type third struct {
	acc    *implicit.TripleAcc
	sketch *implicit.SketchAcc
	rows   *implicit.RowAcc
	op     *implicit.RowOperator // over rows, once tensor made it
	track  *tracker              // reports the solve's contractions (Fit only)
	// mom, when set, is the moments of the pass for b.w, formed already
	// (FitK's smaller k: a block of the largest k's); the solve consumes it.
	mom *implicit.Whitened
	// fused is set when the power pass gathered these statistics (fused.go).
	fused bool
}

// kind is the representation th holds.
func (th *third) kind() Third {
	switch {
	case th.sketch != nil:
		return Sketch
	case th.rows != nil:
		return Rows
	}
	return Explicit
}

// close removes what the representation keeps on disk.
func (th *third) close() error {
	if th.rows != nil {
		return th.rows.Close()
	}
	return nil
}

// tensor is how the solver sees the whitened, corrected third moment
// T(P,P,P): the packed k×k×k tensor (corrected and transformed
// explicitly), the implicit operator over rows in memory (cfg.Implicit) or
// on disk, or the tensor sketch with the correction sketched in; the last
// three are corrected and re-whitened implicitly (docs/MATH.md §3.5, Transformed).
func (th *third) tensor(mom *implicit.Whitened, w, p *mat.Dense, cfg Config) (solver.Tensor, error) {
	var corr implicit.Correction
	if !cfg.Single {
		a0 := cfg.Alpha0
		corr = implicit.Correction{A: -a0 / (a0 + 2), B: 2 * a0 * a0 / ((a0 + 2) * (a0 + 1)), V: mom.M1, M: mom.E2}
	}
	var base solver.Tensor
	switch {
	case th.sketch != nil:
		e3, err := th.sketch.E3(w, cfg.Workers)
		if err != nil {
			return nil, fmt.Errorf("lda: %w", err)
		}
		if !cfg.Single {
			(&implicit.SketchedMoments{Whitened: mom, E3: e3}).Correct(&corr)
		}
		return &implicit.Transformed{T: e3, P: p}, nil
	case th.rows != nil:
		op, err := th.rows.Operator(w)
		if err != nil {
			return nil, fmt.Errorf("lda: %w", err)
		}
		base, th.op = op, op
	case cfg.Implicit:
		op, err := th.acc.Operator(w)
		if err != nil {
			return nil, fmt.Errorf("lda: %w", err)
		}
		base = op
	default:
		if !cfg.Single {
			corr.AddTo(mom.E3)
		}
		return implicit.Transform(mom.E3, p), nil
	}
	if !cfg.Single {
		base = &implicit.Corrected{T: base, C: corr}
	}
	return &implicit.Transformed{T: base, P: p}, nil
}

// whitenedM2 returns WᵀM̂2W = Ẽ2 − c·m̃m̃ᵀ as estimated by the third-moment
// pass.
func whitenedM2(mom *implicit.Whitened, coef float64) *mat.SymDense {
	k := mom.E2.SymmetricDim()
	m2 := mat.NewSymDense(k, nil)
	m2.CopySym(mom.E2)
	if coef != 0 {
		m2.SymRankOne(m2, -coef, mat.NewVecDense(k, mom.M1))
	}
	return m2
}

// pairBack returns M̂2·W·P = (Ê2W − c·M̂1(M̂1ᵀW))·P (d×k) for a k×k P:
// with P the re-whitening times the eigenvectors of the re-whitened tensor,
// those eigenvectors mapped back to the vocabulary. It works in
// mom.E2W's storage, a block of rows at a time, so no second d×k matrix is
// needed.
func pairBack(mom *implicit.Whitened, p *mat.Dense, coef float64) *mat.Dense {
	m2w := mom.E2W
	d, k := m2w.Dims()
	if coef != 0 {
		m2w.RankOne(m2w, -coef, mat.NewVecDense(d, mom.RawM1), mat.NewVecDense(k, mom.M1))
	}
	var blk mat.Dense
	for r0 := 0; r0 < d; r0 += backRows {
		rows := m2w.Slice(r0, min(d, r0+backRows), 0, k).(*mat.Dense)
		blk.Reset()
		blk.Mul(rows, p)
		rows.Copy(&blk)
	}
	return m2w
}

// backRows is the block of rows pairBack multiplies at once.
const backRows = 4096

// ritzValues returns the eigenvalues of QᵀM̂2Q = D^{1/2} g D^{1/2} (largest
// first) for the basis W = Q D^{-1/2} and g = WᵀM̂2W measured by the second
// pass: the top-k eigenvalues of M̂2 as far as span(Q) holds them (exactly
// them for the exact whitening).
func ritzValues(g *mat.SymDense, d []float64) []float64 {
	k := len(d)
	s := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			s.SetSym(i, j, g.At(i, j)*math.Sqrt(d[i]*d[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		return slices.Clone(d)
	}
	v := es.Values(nil)
	slices.Reverse(v)
	return v
}
