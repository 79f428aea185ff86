package lda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// header describes statistics of phase over d words for cfg.
func header(cfg Config, d int, vocab []string, phase, cols int, basis uint64) statsfile.Header {
	h := statsfile.Header{
		Model: cfg.modelName(), Phase: phase, D: d, K: cfg.K, Cols: cols, Alpha0: cfg.Alpha0, Seed: cfg.Seed,
		Exact: cfg.exact(d), VocabHash: statsfile.VocabHash(d, vocab), Basis: basis, Shards: 1,
	}
	if !h.Exact {
		h.Sketch, h.Oversample = sketchName, max(0, cfg.Oversample)
	}
	return h
}

// checkStats reports whether statistics with header h can serve cfg over a
// vocabulary of d words (with vocabHash; 0 skips the vocabulary check).
func checkStats(h statsfile.Header, cfg Config, d int, vocabHash uint64) error {
	want := header(cfg, d, nil, h.Phase, h.Cols, h.Basis)
	want.VocabHash, want.Shards, want.Power = h.VocabHash, h.Shards, h.Power
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
// header. The whitening settings (ExactDim, Oversample) are always taken
// from the header: the statistics were computed with them. PowerIters is
// left as it is: it states which fit a phase 2 reproduces (Phase2Stats).
func ConfigFromStats(cfg Config, h statsfile.Header) Config {
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
// Sharded and incremental fits run Fit's passes as phases, each a pass over
// every shard whose results are added (implicit.TopicStats.Merge):
//
//  1. Phase1Stats: counts, Σc/ℓ and Ê2·Ω, with the Ω that cfg.Seed
//     determines (the d×d identity for a vocabulary of at most ExactDim
//     words). Merged phase-1 statistics determine the whitening W
//     (Whitening).
//  2. Optionally PowerStats, once per power pass of Fit: the same sums
//     against Q = orth(M̂2·Ω) (then orth(M̂2·Q) of the previous power pass),
//     computed from the merged statistics of the pass before and stored in
//     the file. Merged power statistics determine W as phase 1's do. The
//     default Fit takes one power pass when the first sketch does not decay
//     (PowerAdvice), and Phase2Stats refuses a phase-1 basis there unless
//     told (cfg.PowerIters −1) to reproduce a fit without it.
//  3. Phase2Stats: the whitened third-order statistics and Ê2·W for that W.
//     W is stored in the file, so every shard of phase 2 uses the same one
//     and merges of statistics taken with different W are refused.
//
// FitStats then fits from the merged phase-2 statistics without reading
// data. The steps are those of Fit, and the totals are exact fixed-point
// sums of the batches' partial sums (implicit.Exact), so statistics of
// complementary shards, merged in any order, give the model of the
// statistics of their union bit for bit, provided the shards are cut where
// the union's batches are (whole files in batches of stream.Options.BatchRows
// documents, each file a multiple of it but the last; Parquet and Arrow files
// at row-group boundaries, where stream.Options.BatchEntries cuts them).
// Fit's passes keep the same exact totals, so its model before the EM
// passes (Config.EM) is that of FitStats bit for bit.
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
//
// With a power pass the same holds one step later: power statistics are a
// plain sum against the fixed Q stored in them, so each night adds the new
// files' power statistics against that Q (PowerStatsLike) to the running
// total, and the drift is measured between the W of the merged power
// statistics and the running phase-2 W. Beyond the tolerance, recompute the
// power pass over all the data from the merged phase-1 statistics (a new Q)
// and phase 2 after it, which is then the default Fit of all the data.
func Phase1Stats(ctx context.Context, src stream.DocSource, cfg Config) (*implicit.TopicStats, error) {
	d := src.Info().Terms
	cfg, err := cfg.withDefaults(d)
	if err != nil {
		return nil, err
	}
	return pairStats(ctx, src, sketchMatrix(d, cfg), cfg)
}

// pairStats runs a pass of phase-1 sums against omega over src, with exact
// totals, into statistics of the first sketch (the caller numbers a power
// pass).
func pairStats(ctx context.Context, src stream.DocSource, omega mat.Matrix, cfg Config) (*implicit.TopicStats, error) {
	info := src.Info()
	track := newTracker(cfg)
	acc, err := pairPass(ctx, src, omega, cfg, track)
	if err != nil {
		return nil, err
	}
	st := &implicit.TopicStats{Header: header(cfg, info.Terms, info.Vocab, 1, acc.Cols, acc.Basis)}
	st.Pair, st.Vocab, st.Exact = acc, info.Vocab, track.exact
	return st, nil
}

// Whitening computes the whitening W = Q D^{-1/2} (d×k) and its scales D from
// merged phase-1 or power statistics, as Fit does after its first pass or
// its last power pass (D are the top-k eigenvalues of M̂2 when exact reports
// the dense path, else the singular values of the sketch M̂2·Ω or M̂2·Q).
func Whitening(ctx context.Context, p1 *implicit.TopicStats, cfg Config) (w *mat.Dense, values []float64, exact bool, err error) {
	b, err := whiteningStats(ctx, p1, cfg)
	if err != nil {
		return nil, nil, false, err
	}
	return b.w, b.values, b.exact, nil
}

// whiteningStats is Whitening with the whole basis; its passes count the
// first sketch and the power passes of p1.
func whiteningStats(ctx context.Context, p1 *implicit.TopicStats, cfg Config) (*basis, error) {
	cfg, omega, err := sketchStats(p1, cfg)
	if err != nil {
		return nil, err
	}
	// No data at hand: whitening adds no power pass.
	cfg.PowerIters = 0
	b, err := whitening(ctx, p1.Pair, omega, cfg, nil, nil, false, p1.Header.Power > 0)
	if err != nil {
		return nil, err
	}
	b.passes += p1.Header.Power
	return b, nil
}

// Phase2Stats computes the statistics of Fit's second pass over src. basis
// is either merged phase-1 or power statistics (W is computed from them,
// identically on every shard) or phase-2 statistics whose W is reused, which
// keeps the new statistics mergeable with them (see the incremental fits
// above).
//
// With a phase-1 or power basis, cfg.PowerIters says which Fit the
// statistics reproduce, and the basis must hold its power passes: N > 0
// exactly N; −1 none; 0 (the default Fit) none where the first sketch
// decays, else one or more, and a phase-1 basis whose sketch does not decay
// is refused with ErrPowerPass (see PowerAdvice).
func Phase2Stats(ctx context.Context, src stream.DocSource, basis *implicit.TopicStats, cfg Config) (*implicit.TopicStats, error) {
	info := src.Info()
	d := info.Terms
	h := basis.Header
	cfg, err := ConfigFromStats(cfg, h).withDefaults(d)
	if err != nil {
		return nil, err
	}
	if err := checkStats(h, cfg, d, statsfile.VocabHash(d, info.Vocab)); err != nil {
		return nil, err
	}
	var (
		w        *mat.Dense
		values   []float64
		passes   int
		tail     float64
		negative int
	)
	switch h.Phase {
	case 1:
		b, err := whiteningStats(ctx, basis, cfg)
		if err != nil {
			return nil, err
		}
		if err := powerPolicy(cfg, h, b); err != nil {
			return nil, err
		}
		w, values, passes, tail, negative = b.w, b.values, b.passes, b.tail, b.negative
	case 2:
		// Read only; st.W below is a copy.
		if w = basis.WMatrix(); w == nil {
			return nil, errors.New("lda: phase-2 statistics without a whitening basis")
		}
		values, passes, tail, negative = slices.Clone(basis.Values), basis.Passes, basis.Tail, basis.Negative
	default:
		return nil, fmt.Errorf("lda: unknown statistics phase %d", h.Phase)
	}
	// Nothing below reads basis: its sums and exact arrays (several d×k
	// arrays) can be collected during the pass.
	vocab := basis.Vocab
	track := newTracker(cfg)
	// The cubes' sample follows from the corpus's tokens in the first
	// phase; a running phase-2 basis keeps its own, so its merges hold.
	var cubes implicit.DocSample
	switch {
	case h.Phase == 2 && basis.Triple != nil:
		cubes = basis.Triple.Cubes
	case basis.Pair != nil:
		cubes = cfg.cubeSample(basis.Pair.Tokens, d, w.RawMatrix().Cols, negative)
	}
	acc, err := triplePass(ctx, src, w, cubes, false, cfg, track)
	if err != nil {
		return nil, err
	}
	_, k := w.Dims()
	st := &implicit.TopicStats{Header: header(cfg, d, info.Vocab, 2, k, implicit.Fingerprint(w))}
	st.Header.VocabHash = h.VocabHash
	st.Triple, st.Exact = acc, track.exact
	st.W = slices.Clone(w.RawMatrix().Data)
	st.Values, st.Passes, st.Tail, st.Negative = values, passes, tail, negative
	st.Vocab = info.Vocab
	if st.Vocab == nil {
		st.Vocab = vocab
	}
	return st, nil
}

// FitStats fits the model from merged phase-2 statistics, as the last step
// of Fit does after its second pass, without Fit's EM passes (cfg.EM is not
// read: RefineEM runs them over the documents). Fields of cfg left zero that
// the statistics fix are taken from them (ConfigFromStats).
func FitStats(ctx context.Context, st *implicit.TopicStats, cfg Config) (*models.Model, error) {
	start := time.Now()
	h := st.Header
	if h.Phase != 2 || st.Triple == nil {
		return nil, fmt.Errorf("lda: fitting needs merged phase-2 statistics, got phase %d (run the phase-2 pass with this file as its basis first)", h.Phase)
	}
	cfg, b, err := phase2Basis(st, cfg)
	if err != nil {
		return nil, err
	}
	m, err := solve(ctx, st.Triple, b, cfg)
	var neg *negativeError
	if errors.As(err, &neg) && !h.Exact && st.Passes == 1 && cfg.PowerIters >= 0 {
		// Fit takes a power pass over the first sketch's range here.
		neg.advice = "W from the first sketch holds negative directions of the second moment, which the power pass over the sketch's range separates, as fit does: compute the power statistics with the phase-1 statistics as the basis, then phase 2 with those as the basis"
	}
	if err != nil {
		return nil, err
	}
	m.Vocab = st.Vocab
	m.Fit.Passes = st.Passes + 1
	// The statistics hold the explicit tensor, which Fit's plan also holds
	// when it chooses (cfg.Third Auto) on data whose tensor fits the
	// budget: the record is that of the Fit the statistics reproduce.
	m.Fit.Plan = &PlanRecord{Third: Explicit, Auto: cfg.Third == Auto, Solver: cfg.solverFor(Explicit)}
	m.Fit.Seconds = time.Since(start).Seconds()
	return m, nil
}

// phase2Basis returns cfg completed from the phase-2 statistics st
// (ConfigFromStats, the defaults, checked against them) and the whitening
// they were taken with.
func phase2Basis(st *implicit.TopicStats, cfg Config) (Config, *basis, error) {
	h := st.Header
	cfg, err := ConfigFromStats(cfg, h).withDefaults(h.D)
	if err != nil {
		return cfg, nil, err
	}
	if err := checkStats(h, cfg, h.D, 0); err != nil {
		return cfg, nil, err
	}
	w := st.WMatrix()
	if w == nil || len(st.Values) != cfg.K {
		return cfg, nil, errors.New("lda: phase-2 statistics lack the whitening basis or its eigenvalues")
	}
	return cfg, &basis{w: mat.DenseCopyOf(w), values: slices.Clone(st.Values), exact: h.Exact, passes: st.Passes, tail: st.Tail, negative: st.Negative}, nil
}
