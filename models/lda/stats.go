package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// errCaptured stops sketch.TopEigen at its first product, once Ω is known.
var errCaptured = errors.New("lda: Ω captured")

// captureOp records the first block sketch.TopEigen multiplies by.
type captureOp struct {
	d     int
	omega *mat.Dense
}

func (c *captureOp) Dim() int { return c.d }

func (c *captureOp) MulBlock(_ context.Context, _, omega *mat.Dense) error {
	c.omega = mat.DenseCopyOf(omega)
	return errCaptured
}

func sketchOptions(cfg Config) sketch.Options {
	return sketch.Options{
		Oversample: cfg.Oversample, PowerIters: cfg.PowerIters, Seed: cfg.Seed, ExactDim: cfg.ExactDim,
		Nystrom: !cfg.RayleighRitz,
	}
}

// sketchSettings returns the settings Ω depends on, for the statistics
// header: exact whitening, or the effective oversampling (0 when exact).
func sketchSettings(cfg Config, d int) (exact bool, oversample int) {
	switch {
	case d <= cfg.ExactDim:
		return true, 0
	case cfg.Oversample == 0:
		return false, sketch.DefaultOversample
	case cfg.Oversample < 0:
		return false, 0
	}
	return false, cfg.Oversample
}

// statsConfig validates cfg for a fit from statistics over a vocabulary of d
// words.
func statsConfig(cfg Config, d int) (Config, error) {
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return cfg, err
	}
	if d > cfg.ExactDim && (cfg.PowerIters != 0 || cfg.RayleighRitz) {
		return cfg, fmt.Errorf("lda: statistics support the one-pass Nyström whitening only (power-iters=%d, rayleigh-ritz=%v need passes that depend on earlier ones)", cfg.PowerIters, cfg.RayleighRitz)
	}
	return cfg, nil
}

func modelName(cfg Config) string {
	if cfg.Single {
		return "topic"
	}
	return "lda"
}

// sketchBlock returns the Ω that Fit's whitening multiplies the second moment
// by first for this configuration.
func sketchBlock(ctx context.Context, d int, cfg Config) (*mat.Dense, error) {
	c := &captureOp{d: d}
	_, err := sketch.TopEigen(ctx, c, cfg.K, sketchOptions(cfg))
	if !errors.Is(err, errCaptured) {
		if err == nil {
			err = errors.New("no product requested")
		}
		return nil, fmt.Errorf("lda: sketch: %w", err)
	}
	return c.omega, nil
}

// CheckStats reports whether statistics with header h can serve a fit with
// cfg over a source with vocabulary (d, vocabHash); vocabHash 0 skips the
// vocabulary check.
func checkStats(h implicit.StatsHeader, cfg Config, d int, vocabHash uint64) error {
	exact, over := sketchSettings(cfg, d)
	want := implicit.StatsHeader{
		Model: modelName(cfg), Phase: h.Phase, D: d, K: cfg.K, Cols: h.Cols, Alpha0: cfg.Alpha0, Seed: cfg.Seed,
		Exact: exact, Oversample: over, VocabHash: h.VocabHash, Basis: h.Basis,
	}
	if vocabHash != 0 {
		want.VocabHash = vocabHash
	}
	if err := want.Compatible(h); err != nil {
		return fmt.Errorf("lda: statistics do not match this fit (this fit vs file): %w", err)
	}
	return nil
}

// ConfigFromStats fills the zero fields of cfg that statistics fix (K,
// Alpha0, Single, Seed) from the statistics header, so a fit from statistics
// needs no repeated flags; set fields must agree with the header. The
// whitening settings (ExactDim, Oversample, PowerIters, RayleighRitz) are
// always taken from the header: the statistics were computed with them.
func ConfigFromStats(cfg Config, h implicit.StatsHeader) Config {
	cfg.PowerIters, cfg.RayleighRitz = 0, false
	if h.Exact {
		cfg.ExactDim = h.D
	} else {
		cfg.ExactDim = -1
		cfg.Oversample = h.Oversample
		if h.Oversample == 0 {
			cfg.Oversample = -1
		}
	}
	if cfg.K == 0 {
		cfg.K = h.K
	}
	if h.Model == "topic" {
		cfg.Single = true
	}
	if cfg.Alpha0 == 0 {
		cfg.Alpha0 = h.Alpha0
	}
	if cfg.Seed == 0 {
		cfg.Seed = h.Seed
	}
	return cfg
}

// Phase1Stats computes the phase-1 statistics of src: counts, Σc/ℓ and the
// sketch E2·Ω for the Ω determined by cfg (see Fit).
//
// Sharded and incremental fits: a fit from statistics runs in two phases, each a pass over every shard
// whose results are added (implicit.Stats.Merge):
//
//  1. Phase1Stats: counts, Σc/ℓ and the sketch E2·Ω, with the Ω that
//     cfg.Seed determines (the d×d identity for a vocabulary of at most
//     ExactDim words). Merged phase-1 statistics determine the whitening W
//     (Whitening).
//  2. Phase2Stats: the whitened third-order statistics for that W. W is
//     stored in the file, so every shard of phase 2 uses the same one and
//     merges of statistics taken with different W are refused.
//
// FitStats then fits from the merged phase-2 statistics without reading data.
//
// With exact whitening the result equals Fit on the union of the shards up to
// the order of floating-point sums. Fit's randomized whitening takes two
// passes (range finder, then M2·Q); from statistics W comes from the single
// sketch Y = M2·Ω instead, by the one-pass Nyström approximation
// M2 ≈ Y (ΩᵀY)⁺ Yᵀ, so randomized fits from statistics are as accurate as
// Fit but not identical to it, given enough oversampling: with k=5, d=600,
// Config.Oversample=50 came within 0.004 mean ℓ1 (to the truth) of Fit, 10
// within 0.02. The re-whitening of step 2 makes the tensor exactly whitened
// within span(W) either way.
//
// Incremental (nightly) fits and a drifting basis: phase-1 statistics are a
// plain sum over documents against a fixed Ω, so they merge forever: each
// night adds the new files' phase-1 statistics to the running total. Phase-2
// statistics are valid only for the W they were whitened with. Each night,
// compute W from the merged phase-1 statistics and its largest principal
// angle to the W stored in the running phase-2 statistics (BasisDrift). While
// the angle stays below a tolerance (say 0.05 rad) keep the old W: compute
// phase 2 of the new files against the old phase-2 file (Phase2Stats accepts a
// phase-2 file as its basis) and merge; FitStats re-whitens exactly within
// span(W), so only directions outside the old subspace are lost, and those
// are bounded by the angle. When the top-k subspace moves beyond the
// tolerance, recompute phase 2 over all the data with the new W.
func Phase1Stats(ctx context.Context, src stream.DocSource, cfg Config) (*implicit.Stats, error) {
	info := src.Info()
	d := info.Terms
	cfg, err := statsConfig(cfg, d)
	if err != nil {
		return nil, err
	}
	omega, err := sketchBlock(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	_, cols := omega.Dims()
	track := &tracker{hook: cfg.Progress, start: time.Now()}
	pass := track.begin()
	accs := make([]*implicit.PairAcc, cfg.Workers)
	for w := range accs {
		accs[w] = implicit.NewPairAcc(d, cols)
	}
	err = stream.Each(ctx, src.Docs, cfg.Workers, func(w int, b *stream.Docs) error {
		accs[w].Add(b, omega)
		track.report(pass, "second-moment", b.Len(), false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	track.report(pass, "second-moment", 0, true)
	for _, a := range accs[1:] {
		if err := accs[0].Merge(a); err != nil {
			return nil, err
		}
	}
	accs[0].Basis = implicit.Fingerprint(omega)
	st := &implicit.Stats{Header: header(cfg, d, info.Vocab, 1, cols, accs[0].Basis)}
	st.Pair = accs[0]
	st.Vocab = info.Vocab
	return st, nil
}

func header(cfg Config, d int, vocab []string, phase, cols int, basis uint64) implicit.StatsHeader {
	exact, over := sketchSettings(cfg, d)
	return implicit.StatsHeader{
		Model: modelName(cfg), Phase: phase, D: d, K: cfg.K, Cols: cols, Alpha0: cfg.Alpha0, Seed: cfg.Seed,
		Exact: exact, Oversample: over, VocabHash: implicit.VocabHash(d, vocab), Basis: basis, Shards: 1,
	}
}

// m2Times sets dst = M2·Ω from merged phase-1 sums, with the same arithmetic
// as a pass of Fit: M2 = Ê2 − c·m̂m̂ᵀ.
func m2Times(dst *mat.Dense, acc *implicit.PairAcc, coef float64, omega *mat.Dense) error {
	_, cols := omega.Dims()
	m1, err := acc.Mean(dst)
	if err != nil {
		return err
	}
	if coef != 0 {
		mo := make([]float64, cols)
		for j := range cols {
			mo[j] = -coef * floats.Dot(m1, mat.Col(nil, j, omega))
		}
		raw := dst.RawMatrix()
		for i, mi := range m1 {
			if mi != 0 {
				floats.AddScaled(raw.Data[i*raw.Stride:i*raw.Stride+cols], mi, mo)
			}
		}
	}
	return nil
}

// replayOp answers sketch.TopEigen's product with Ω from merged statistics.
type replayOp struct {
	acc  *implicit.PairAcc
	coef float64
}

func (r *replayOp) Dim() int { return r.acc.D }

func (r *replayOp) MulBlock(_ context.Context, dst, omega *mat.Dense) error {
	if implicit.Fingerprint(omega) != r.acc.Basis {
		return errors.New("lda: the whitening asked for a product the phase-1 statistics do not hold")
	}
	return m2Times(dst, r.acc, r.coef, omega)
}

// Whitening computes the whitening W = Q D^{-1/2} (d×k) and the eigenvalues D
// of the second moment from merged phase-1 statistics; exact reports the
// dense path.
func Whitening(ctx context.Context, p1 *implicit.Stats, cfg Config) (w *mat.Dense, values []float64, exact bool, err error) {
	h := p1.Header
	if h.Phase != 1 || p1.Pair == nil {
		return nil, nil, false, fmt.Errorf("lda: whitening needs phase-1 statistics, got phase %d", h.Phase)
	}
	cfg, err = statsConfig(ConfigFromStats(cfg, h), h.D)
	if err != nil {
		return nil, nil, false, err
	}
	if err := checkStats(h, cfg, h.D, 0); err != nil {
		return nil, nil, false, err
	}
	coef := 0.0
	if !cfg.Single {
		coef = cfg.Alpha0 / (cfg.Alpha0 + 1)
	}
	acc := *p1.Pair // Mean and Basis are read only; the copy guards the sums
	if acc.Docs == 0 {
		return nil, nil, false, fmt.Errorf("lda: %w", implicit.ErrNoDocs)
	}
	omega, err := sketchBlock(ctx, h.D, cfg)
	if err != nil {
		return nil, nil, false, err
	}
	if fp := implicit.Fingerprint(omega); acc.Basis != 0 && fp != acc.Basis {
		return nil, nil, false, fmt.Errorf("lda: %w: phase-1 statistics basis %016x, seed %d gives %016x", implicit.ErrBasis, acc.Basis, cfg.Seed, fp)
	}
	acc.Basis = implicit.Fingerprint(omega)
	var eig *sketch.Result
	if h.D <= cfg.ExactDim {
		eig, err = sketch.TopEigen(ctx, &replayOp{acc: &acc, coef: coef}, cfg.K, sketchOptions(cfg))
	} else {
		y := mat.NewDense(h.D, h.Cols, nil)
		if err = m2Times(y, &acc, coef, omega); err == nil {
			eig, err = nystromOnePass(y, omega, cfg.K)
		}
	}
	switch {
	case errors.Is(err, sketch.ErrRank):
		return nil, nil, false, fmt.Errorf("lda: %w: the second moment has rank below k=%d; lower k: %v", ErrTooManyTopics, cfg.K, err)
	case err != nil:
		return nil, nil, false, fmt.Errorf("lda: whitening: %w", err)
	}
	for i, v := range eig.Values {
		if !(v > eig.Values[0]*1e-12) {
			return nil, nil, false, fmt.Errorf("lda: %w: eigenvalue %d of the second moment is %.3g (largest %.3g), so the data support fewer than k=%d topics; lower k (or check alpha0=%g)",
				ErrTooManyTopics, i+1, v, eig.Values[0], cfg.K, cfg.Alpha0)
		}
	}
	w = eig.Vectors
	for j, v := range eig.Values {
		col := w.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/math.Sqrt(v), col)
	}
	return w, eig.Values, eig.Exact, nil
}

// nystromOnePass returns the top-k eigenpairs of the Nyström approximation
// Y (ΩᵀY)⁺ Yᵀ of a symmetric matrix A from one sketch Y = A·Ω. The
// pseudo-inverse keeps the positive part of ΩᵀY, so the approximation is
// positive semi-definite.
func nystromOnePass(y, omega *mat.Dense, k int) (*sketch.Result, error) {
	d, l := y.Dims()
	var c mat.Dense
	c.Mul(omega.T(), y)
	cs := mat.NewSymDense(l, nil)
	for i := range l {
		for j := i; j < l; j++ {
			cs.SetSym(i, j, (c.At(i, j)+c.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(cs, true) {
		return nil, errors.New("eigendecomposition of ΩᵀY did not converge")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := slices.Max(vals)
	var keep []int
	for i, v := range vals {
		if v > top*1e-12 {
			keep = append(keep, i)
		}
	}
	if len(keep) > k {
		// Rank-k truncation of the core: its small eigenvalues are sampling
		// noise, which the pseudo-inverse would amplify.
		keep = keep[len(keep)-k:] // EigenSym orders values increasing
	}
	if len(keep) < k || top <= 0 {
		return nil, fmt.Errorf("%w: ΩᵀY has %d positive eigenvalues, need k=%d", sketch.ErrRank, len(keep), k)
	}
	// F = Y V₊ Λ₊^{-1/2}, so that Y (ΩᵀY)⁺ Yᵀ = F Fᵀ.
	vp := mat.NewDense(l, len(keep), nil)
	for j, i := range keep {
		s := 1 / math.Sqrt(vals[i])
		for r := range l {
			vp.Set(r, j, vecs.At(r, i)*s)
		}
	}
	f := mat.NewDense(d, len(keep), nil)
	f.Mul(y, vp)
	var svd mat.SVD
	if !svd.Factorize(f, mat.SVDThin) {
		return nil, errors.New("SVD of the Nyström factor did not converge")
	}
	sv := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	res := &sketch.Result{Values: make([]float64, k), Vectors: mat.NewDense(d, k, nil), Products: 1}
	for j := range k {
		res.Values[j] = sv[j] * sv[j]
		col := u.ColView(j)
		// Fix the sign: the entry of largest magnitude is positive.
		best := 0
		for i := range d {
			if math.Abs(col.AtVec(i)) > math.Abs(col.AtVec(best)) {
				best = i
			}
		}
		sign := 1.0
		if col.AtVec(best) < 0 {
			sign = -1
		}
		for i := range d {
			res.Vectors.Set(i, j, sign*col.AtVec(i))
		}
	}
	return res, nil
}

// Phase2Stats computes the whitened third-order statistics of src. basis is
// either merged phase-1 statistics (W is computed from them, identically on
// every shard) or phase-2 statistics whose W is reused, which keeps the new
// statistics mergeable with them (see the incremental fits above).
func Phase2Stats(ctx context.Context, src stream.DocSource, basis *implicit.Stats, cfg Config) (*implicit.Stats, error) {
	info := src.Info()
	d := info.Terms
	h := basis.Header
	cfg, err := statsConfig(ConfigFromStats(cfg, h), d)
	if err != nil {
		return nil, err
	}
	if err := checkStats(h, cfg, d, implicit.VocabHash(d, info.Vocab)); err != nil {
		return nil, err
	}
	var (
		w      *mat.Dense
		values []float64
		passes int
	)
	switch h.Phase {
	case 1:
		if w, values, _, err = Whitening(ctx, basis, cfg); err != nil {
			return nil, err
		}
		passes = 1
	case 2:
		if w = basis.WMatrix(); w == nil {
			return nil, errors.New("lda: phase-2 statistics without a whitening basis")
		}
		w = mat.DenseCopyOf(w)
		values, passes = slices.Clone(basis.Values), basis.Passes
	default:
		return nil, fmt.Errorf("lda: unknown statistics phase %d", h.Phase)
	}
	track := &tracker{hook: cfg.Progress, start: time.Now()}
	acc, err := thirdPass(ctx, src, w, cfg.Workers, cfg.Implicit, track)
	if err != nil {
		return nil, err
	}
	_, k := w.Dims()
	st := &implicit.Stats{Header: header(cfg, d, info.Vocab, 2, k, implicit.Fingerprint(w))}
	st.Header.VocabHash = h.VocabHash
	st.Triple = acc
	st.W = slices.Clone(w.RawMatrix().Data)
	st.Values, st.Passes = values, passes
	st.Vocab = info.Vocab
	if st.Vocab == nil {
		st.Vocab = basis.Vocab
	}
	return st, nil
}

// FitStats fits the model from merged phase-2 statistics, as steps 2–3 of Fit
// do after the third-moment pass. Fields of cfg left zero that the
// statistics fix are taken from them (ConfigFromStats).
func FitStats(ctx context.Context, st *implicit.Stats, cfg Config) (*models.Model, error) {
	start := time.Now()
	h := st.Header
	if h.Phase != 2 || st.Triple == nil {
		return nil, fmt.Errorf("lda: fitting needs merged phase-2 statistics, got phase %d (run the phase-2 pass with this file as its basis first)", h.Phase)
	}
	cfg, err := statsConfig(ConfigFromStats(cfg, h), h.D)
	if err != nil {
		return nil, err
	}
	if err := checkStats(h, cfg, h.D, 0); err != nil {
		return nil, err
	}
	w := st.WMatrix()
	if w == nil || len(st.Values) != cfg.K {
		return nil, errors.New("lda: phase-2 statistics lack the whitening basis or its eigenvalues")
	}
	w = mat.DenseCopyOf(w)
	acc := st.Triple
	k, a0 := cfg.K, cfg.Alpha0
	mom, err := acc.Moments(w, cfg.Workers)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	var corr implicit.Correction
	if !cfg.Single {
		corr = implicit.Correction{A: -a0 / (a0 + 2), B: 2 * a0 * a0 / ((a0 + 2) * (a0 + 1)), V: mom.M1, M: mom.E2}
	}
	p, b, gvals, err := rewhiten(unwhiten(w, st.Values), whitenedM2(mom, a0, cfg.Single))
	if err != nil {
		return nil, err
	}
	var t solver.Tensor
	if cfg.Implicit {
		op, err := acc.Operator(w)
		if err != nil {
			return nil, fmt.Errorf("lda: %w", err)
		}
		var base solver.Tensor = op
		if !cfg.Single {
			base = &implicit.Corrected{T: op, C: corr}
		}
		t = &implicit.Transformed{T: base, P: p}
	} else {
		if !cfg.Single {
			corr.AddTo(mom.E3)
		}
		t = implicit.Transform(mom.E3, p)
	}
	solve, err := solver.ByName(cfg.Solver)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	res, err := solve(ctx, t, k, solver.Options{Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Refine: cfg.Refine})
	if errors.Is(err, solver.ErrNonPositive) {
		return nil, fmt.Errorf("lda: %w: the whitened third moment has fewer than k=%d positive eigenvalues; lower k: %v", ErrTooManyTopics, k, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lda: tensor decomposition: %w", err)
	}
	m := recoverTopics(res, b, a0, cfg.Single)
	m.Vocab = st.Vocab
	m.Fit.Solver.Name = cfg.Solver
	fs := m.Fit
	fs.Docs, fs.Skipped, fs.Tokens = acc.Docs, acc.Skipped, acc.Tokens
	fs.Passes = st.Passes + 1
	fs.Workers, fs.Seed = cfg.Workers, cfg.Seed
	fs.Whitening = "randomized"
	if h.Exact {
		fs.Whitening = "exact"
	}
	fs.M2Eigenvalues = slices.Clone(st.Values)
	fs.WhitenedM2Eigenvalues = slices.Clone(gvals)
	slices.Reverse(fs.WhitenedM2Eigenvalues)
	fs.Seconds = time.Since(start).Seconds()
	return m, nil
}

// SubspaceAngle returns the largest principal angle, in radians, between the
// column spans of a and b (both d×k of full column rank): asin of the
// largest singular value of (I − QaQaᵀ)Qb, accurate for small angles.
func SubspaceAngle(a, b *mat.Dense) (float64, error) {
	qa, err := orthoBasis(a)
	if err != nil {
		return 0, err
	}
	qb, err := orthoBasis(b)
	if err != nil {
		return 0, err
	}
	var g, r mat.Dense
	g.Mul(qa.T(), qb)
	r.Mul(qa, &g)
	r.Sub(qb, &r)
	var svd mat.SVD
	if !svd.Factorize(&r, mat.SVDNone) {
		return 0, errors.New("lda: SVD for the subspace angle did not converge")
	}
	s := svd.Values(nil)
	if len(s) == 0 {
		return 0, nil
	}
	return math.Asin(min(1, s[0])), nil
}

func orthoBasis(a *mat.Dense) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("lda: SVD of a basis did not converge")
	}
	sv := svd.Values(nil)
	if len(sv) == 0 || sv[len(sv)-1] <= sv[0]*1e-13 {
		return nil, errors.New("lda: basis is rank deficient")
	}
	u := new(mat.Dense)
	svd.UTo(u)
	return u, nil
}

// BasisDrift returns the largest principal angle (radians) between the
// whitening W that merged phase-1 statistics give now and the W stored in
// phase-2 statistics: how far the top-k subspace of the second moment has
// moved since phase 2 was computed (see the incremental fits above).
func BasisDrift(ctx context.Context, p1, p2 *implicit.Stats, cfg Config) (float64, error) {
	if p2.Header.Phase != 2 || p2.WMatrix() == nil {
		return 0, fmt.Errorf("lda: basis drift needs phase-2 statistics, got phase %d", p2.Header.Phase)
	}
	if p1.Header.D != p2.Header.D || p1.Header.K != p2.Header.K {
		return 0, &implicit.IncompatibleError{Field: "d×k", A: fmt.Sprintf("%d×%d", p1.Header.D, p1.Header.K), B: fmt.Sprintf("%d×%d", p2.Header.D, p2.Header.K)}
	}
	w, _, _, err := Whitening(ctx, p1, cfg)
	if err != nil {
		return 0, err
	}
	return SubspaceAngle(w, p2.WMatrix())
}
