package lda

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// ErrPowerPass reports phase-1 statistics whose sketch does not decay past
// the k-th direction (PowerAdvice), where the default Fit takes a power pass
// that the statistics route must take too (PowerStats), or be told not to.
var ErrPowerPass = errors.New("the first sketch does not decay past k, so the default fit takes a power pass here")

// sketchStats checks phase-1 or power statistics p against cfg and returns
// the configuration they fix and the projection their sums were taken
// against: Ω from the seed for phase 1, the stored Q for a power pass.
func sketchStats(p *implicit.TopicStats, cfg Config) (Config, mat.Matrix, error) {
	h := p.Header
	if h.Phase != 1 || p.Pair == nil {
		return cfg, nil, fmt.Errorf("lda: whitening needs phase-1 or power statistics, got phase %d", h.Phase)
	}
	cfg, err := ConfigFromStats(cfg, h).withDefaults(h.D)
	if err != nil {
		return cfg, nil, err
	}
	if err := checkStats(h, cfg, h.D, 0); err != nil {
		return cfg, nil, err
	}
	if h.Power == 0 {
		omega := sketchMatrix(h.D, cfg)
		if fp := implicit.Fingerprint(omega); p.Pair.Basis != 0 && fp != p.Pair.Basis {
			return cfg, nil, fmt.Errorf("lda: %w: phase-1 statistics basis %016x, seed %d gives %016x", implicit.ErrBasis, p.Pair.Basis, cfg.Seed, fp)
		}
		return cfg, omega, nil
	}
	q := p.WMatrix()
	switch {
	case h.Exact || h.Power < 0:
		return cfg, nil, fmt.Errorf("lda: statistics of power pass %d with exact whitening", h.Power)
	case q == nil:
		return cfg, nil, fmt.Errorf("lda: statistics of power pass %d lack their projection Q", h.Power)
	case implicit.Fingerprint(q) != p.Pair.Basis:
		return cfg, nil, fmt.Errorf("lda: %w: power statistics summed against basis %016x, stored Q is %016x", implicit.ErrBasis, p.Pair.Basis, implicit.Fingerprint(q))
	}
	return cfg, q, nil
}

// PowerAdvice reports, for merged phase-1 or power statistics p, the tail
// σ_last/σ_k of the sketch they give and whether the default Fit would take
// a power pass after them: after the first sketch (no power pass yet) of a
// randomized whitening with extra columns whose tail exceeds 0.95 (see
// Config.PowerIters). The statistics route then needs PowerStats before
// Phase2Stats, or cfg.PowerIters −1 to reproduce a fit without it. The tail
// is 0 for the exact whitening.
func PowerAdvice(ctx context.Context, p *implicit.TopicStats, cfg Config) (tail float64, power bool, err error) {
	b, err := whiteningStats(ctx, p, cfg)
	if err != nil {
		return 0, false, err
	}
	return b.tail, autoPower(p.Header, b), nil
}

// autoPower reports whether the default Fit adds a power pass after the
// pass whose statistics have header h and give the basis b: the rule of
// whitening (autoPowerTail), where the first sketch's extra columns show
// no decay.
func autoPower(h statsfile.Header, b *basis) bool {
	return !b.exact && undecayed(h.Power, h.Cols, h.K, b.tail)
}

// undecayed is the rule of the automatic power pass, shared by Fit
// (whitening) and the statistics route (autoPower): a first sketch (no
// power pass yet) with extra columns beyond k whose last singular value is
// above autoPowerTail of the k-th.
func undecayed(powers, cols, k int, tail float64) bool {
	return powers == 0 && cols > k && tail > autoPowerTail
}

// powerPolicy checks that the phase-1 or power statistics with header h,
// which give the basis b, hold the power passes of the Fit cfg describes
// (see Phase2Stats).
func powerPolicy(cfg Config, h statsfile.Header, b *basis) error {
	n := cfg.PowerIters
	switch {
	case b.exact:
		return nil // exact whitening takes no power pass
	case n > 0 && h.Power != n:
		return fmt.Errorf("lda: PowerIters = %d, but the basis holds %d power passes (run the power phase on the merged statistics of each pass until it holds %d)", n, h.Power, n)
	case n < 0 && h.Power > 0:
		return fmt.Errorf("lda: PowerIters = %d means no power pass, but the basis holds %d (give the phase-1 statistics as the basis)", n, h.Power)
	case n == 0 && autoPower(h, b):
		return fmt.Errorf("lda: %w (sketch tail σ_last/σ_k = %.3f > %g): compute the statistics of the power pass with these as the basis first, or take exactly two passes with PowerIters = -1",
			ErrPowerPass, b.tail, autoPowerTail)
	}
	return nil
}

// PowerStats computes over src the statistics of the power pass after the
// pass of basis (merged phase-1 statistics, or merged statistics of power
// pass i): the counts, Σc/ℓ and Ê2·Q for Q = orth(M̂2·Ω), or orth(M̂2·Q_i),
// the orthonormal basis of the sketch the merged statistics give, as Fit's
// whitening computes it before each power pass. Q is computed identically
// on every shard and stored in the statistics, which are phase-1 statistics
// of power pass i+1: they merge with those of the same pass (same Q), and
// whiten like phase-1 statistics (Whitening, Phase2Stats). A vocabulary
// whitened exactly takes no power pass.
func PowerStats(ctx context.Context, src stream.DocSource, basis *implicit.TopicStats, cfg Config) (*implicit.TopicStats, error) {
	d := src.Info().Terms
	cfg, omega, err := sketchStats(basis, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.exact(d) || basis.Header.Exact {
		return nil, fmt.Errorf("lda: the vocabulary of %d words is whitened exactly (ExactDim %d), which takes no power pass", d, cfg.ExactDim)
	}
	y, err := m2Times(basis.Pair, cfg.m2Coef(), omega, false)
	if err != nil {
		return nil, fmt.Errorf("lda: %w", err)
	}
	q, err := orthonormal(y)
	if err != nil {
		return nil, fmt.Errorf("lda: power pass: %w", err)
	}
	return projectedStats(ctx, src, basis, q, basis.Header.Power+1, cfg)
}

// PowerStatsLike computes over src the statistics of the power pass that
// like holds, with like's Q, so that they merge with like: the --append of
// new inputs to power statistics. (Q stays that of the data like was
// computed from; the drift of the subspace is checked where it matters, on
// the W of phase 2: see BasisDrift.)
func PowerStatsLike(ctx context.Context, src stream.DocSource, like *implicit.TopicStats, cfg Config) (*implicit.TopicStats, error) {
	if like.Header.Power < 1 {
		return nil, fmt.Errorf("lda: statistics of phase %d are not of a power pass", like.Header.Phase)
	}
	// sketchStats checks like's Q; projectedStats stores a copy of it.
	cfg, _, err := sketchStats(like, cfg)
	if err != nil {
		return nil, err
	}
	return projectedStats(ctx, src, like, like.WMatrix(), like.Header.Power, cfg)
}

// projectedStats runs the pass of power statistics number power against
// the orthonormal q over src; basis is the statistics q was taken from
// (its vocabulary hash and words carry over).
func projectedStats(ctx context.Context, src stream.DocSource, basis *implicit.TopicStats, q *mat.Dense, power int, cfg Config) (*implicit.TopicStats, error) {
	info := src.Info()
	d := info.Terms
	// Nothing below reads basis: its sums and exact arrays (d×cols each)
	// can be collected during the pass.
	h, vocab := basis.Header, basis.Vocab
	if err := checkStats(h, cfg, d, statsfile.VocabHash(d, info.Vocab)); err != nil {
		return nil, err
	}
	st, err := pairStats(ctx, src, q, cfg)
	if err != nil {
		return nil, err
	}
	st.Header.Power, st.Header.VocabHash = power, h.VocabHash
	st.W = slices.Clone(q.RawMatrix().Data)
	if st.Vocab == nil {
		st.Vocab = vocab
	}
	return st, nil
}
