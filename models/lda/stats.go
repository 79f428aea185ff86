package lda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// statsConfig validates cfg for the statistics route over a vocabulary of d
// words: the phases are Fit's two passes, so power passes (which depend on
// an earlier pass of all the data) are refused.
func statsConfig(cfg Config, d int) (Config, error) {
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return cfg, err
	}
	if !cfg.exact(d) && cfg.PowerIters > 0 {
		return cfg, fmt.Errorf("lda: statistics hold the two passes of a fit; power-iters=%d needs passes that depend on earlier ones", cfg.PowerIters)
	}
	return cfg, nil
}

// header describes statistics of phase over d words for cfg.
func header(cfg Config, d int, vocab []string, phase, cols int, basis uint64) implicit.StatsHeader {
	h := implicit.StatsHeader{
		Model: cfg.modelName(), Phase: phase, D: d, K: cfg.K, Cols: cols, Alpha0: cfg.Alpha0, Seed: cfg.Seed,
		Exact: cfg.exact(d), VocabHash: implicit.VocabHash(d, vocab), Basis: basis, Shards: 1,
	}
	if !h.Exact {
		h.Sketch, h.Oversample = sketchName, max(0, cfg.Oversample)
	}
	return h
}

// checkStats reports whether statistics with header h can serve cfg over a
// vocabulary of d words (with vocabHash; 0 skips the vocabulary check).
func checkStats(h implicit.StatsHeader, cfg Config, d int, vocabHash uint64) error {
	want := header(cfg, d, nil, h.Phase, h.Cols, h.Basis)
	want.VocabHash, want.Shards = h.VocabHash, h.Shards
	if vocabHash != 0 {
		want.VocabHash = vocabHash
	}
	if err := want.Compatible(h); err != nil {
		return fmt.Errorf("lda: statistics do not match this fit (this fit vs file): %w", err)
	}
	return nil
}

// ConfigFromStats fills the zero fields of cfg that statistics fix (K,
// Alpha0, Seed; Single from the model) from the statistics header, so a fit
// from statistics needs no repeated flags; set fields must agree with the
// header. The whitening settings (ExactDim, Oversample, PowerIters) are
// always taken from the header: the statistics were computed with them.
func ConfigFromStats(cfg Config, h implicit.StatsHeader) Config {
	cfg.PowerIters = 0
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

// Phase1Stats computes the statistics of Fit's first pass over src: counts,
// Σc/ℓ and Ê2·Ω for the Ω that cfg determines (see Fit).
//
// Sharded and incremental fits run Fit's two passes as two phases, each a
// pass over every shard whose results are added (implicit.Stats.Merge):
//
//  1. Phase1Stats: counts, Σc/ℓ and Ê2·Ω, with the Ω that cfg.Seed
//     determines (the d×d identity for a vocabulary of at most ExactDim
//     words). Merged phase-1 statistics determine the whitening W
//     (Whitening).
//  2. Phase2Stats: the whitened third-order statistics and Ê2·W for that W.
//     W is stored in the file, so every shard of phase 2 uses the same one
//     and merges of statistics taken with different W are refused.
//
// FitStats then fits from the merged phase-2 statistics without reading
// data. The steps are those of Fit, and the totals are exact fixed-point
// sums of the batches' partial sums (implicit.Exact), so statistics of
// complementary shards, merged in any order, give the model of the
// statistics of their union bit for bit, provided the shards are cut where
// the union's batches are (whole files in batches of stream.Options.BatchRows
// documents, each file a multiple of it but the last). Fit adds the same
// partials in batch order in float64 instead (exact totals cost memory and
// time it does not need), so its model can differ from these in the last
// bits (relative 1e-15 on well-conditioned data).
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
// span(W) and maps topics back through the measured Ê2·W, so a slightly
// stale W costs little. When the top-k subspace moves beyond the tolerance,
// recompute phase 2 over all the data with the new W.
func Phase1Stats(ctx context.Context, src stream.DocSource, cfg Config) (*implicit.Stats, error) {
	info := src.Info()
	d := info.Terms
	cfg, err := statsConfig(cfg, d)
	if err != nil {
		return nil, err
	}
	omega := sketchMatrix(d, cfg)
	track := newTracker(cfg)
	track.exactTotals = true
	acc, err := pairPass(ctx, src, omega, cfg, track)
	if err != nil {
		return nil, err
	}
	st := &implicit.Stats{Header: header(cfg, d, info.Vocab, 1, acc.Cols, acc.Basis)}
	st.Pair, st.Vocab, st.Exact = acc, info.Vocab, track.exact
	return st, nil
}

// Whitening computes the whitening W = Q D^{-1/2} (d×k) and its scales D from
// merged phase-1 statistics, as Fit does after its first pass (D are the top-k
// eigenvalues of M̂2 when exact reports the dense path, else the singular
// values of the sketch M̂2·Ω).
func Whitening(ctx context.Context, p1 *implicit.Stats, cfg Config) (w *mat.Dense, values []float64, exact bool, err error) {
	b, err := whiteningStats(ctx, p1, cfg)
	if err != nil {
		return nil, nil, false, err
	}
	return b.w, b.values, b.exact, nil
}

// whiteningStats is Whitening with the whole basis.
func whiteningStats(ctx context.Context, p1 *implicit.Stats, cfg Config) (*basis, error) {
	h := p1.Header
	if h.Phase != 1 || p1.Pair == nil {
		return nil, fmt.Errorf("lda: whitening needs phase-1 statistics, got phase %d", h.Phase)
	}
	cfg, err := statsConfig(ConfigFromStats(cfg, h), h.D)
	if err != nil {
		return nil, err
	}
	if err := checkStats(h, cfg, h.D, 0); err != nil {
		return nil, err
	}
	omega := sketchMatrix(h.D, cfg)
	if fp := implicit.Fingerprint(omega); p1.Pair.Basis != 0 && fp != p1.Pair.Basis {
		return nil, fmt.Errorf("lda: %w: phase-1 statistics basis %016x, seed %d gives %016x", implicit.ErrBasis, p1.Pair.Basis, cfg.Seed, fp)
	}
	return whitening(ctx, p1.Pair, omega, cfg, nil, nil, false)
}

// Phase2Stats computes the statistics of Fit's second pass over src. basis
// is either merged phase-1 statistics (W is computed from them, identically
// on every shard) or phase-2 statistics whose W is reused, which keeps the
// new statistics mergeable with them (see the incremental fits above).
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
		tail   float64
	)
	switch h.Phase {
	case 1:
		b, err := whiteningStats(ctx, basis, cfg)
		if err != nil {
			return nil, err
		}
		w, values, passes, tail = b.w, b.values, 1, b.tail
	case 2:
		if w = basis.WMatrix(); w == nil {
			return nil, errors.New("lda: phase-2 statistics without a whitening basis")
		}
		w = mat.DenseCopyOf(w)
		values, passes, tail = slices.Clone(basis.Values), basis.Passes, basis.Tail
	default:
		return nil, fmt.Errorf("lda: unknown statistics phase %d", h.Phase)
	}
	track := newTracker(cfg)
	track.exactTotals = true
	acc, err := triplePass(ctx, src, w, cfg, track)
	if err != nil {
		return nil, err
	}
	_, k := w.Dims()
	st := &implicit.Stats{Header: header(cfg, d, info.Vocab, 2, k, implicit.Fingerprint(w))}
	st.Header.VocabHash = h.VocabHash
	st.Triple, st.Exact = acc, track.exact
	st.W = slices.Clone(w.RawMatrix().Data)
	st.Values, st.Passes, st.Tail = values, passes, tail
	st.Vocab = info.Vocab
	if st.Vocab == nil {
		st.Vocab = basis.Vocab
	}
	return st, nil
}

// FitStats fits the model from merged phase-2 statistics, as the last step
// of Fit does after its second pass. Fields of cfg left zero that the
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
	b := &basis{w: mat.DenseCopyOf(w), values: slices.Clone(st.Values), exact: h.Exact, passes: st.Passes, tail: st.Tail}
	m, err := solve(ctx, st.Triple, b, cfg)
	if err != nil {
		return nil, err
	}
	m.Vocab = st.Vocab
	m.Fit.Passes = st.Passes + 1
	m.Fit.Seconds = time.Since(start).Seconds()
	return m, nil
}
