package beamfit

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/lda"
)

// statsAcc is the accumulator of mergeFn: the statistics merged so far, of
// LDA (st), of a dense model (dense), of an EM pass (em) or of an EM pass
// of a sweep over k (sweep); all nil: none
// yet, or only empty inputs.
type statsAcc struct {
	st    *implicit.TopicStats
	dense *implicit.DenseStats
	em    *lda.EMStats
	sweep *lda.SweepEMStats
}

// encodeAcc and decodeAcc are the Beam coder of statsAcc: the statistics
// file format, exact totals included, so that a runner may ship partial
// merges between workers without changing the result.
func encodeAcc(a statsAcc) ([]byte, error) {
	switch {
	case a.dense != nil:
		return encode(context.Background(), a.dense)
	case a.em != nil:
		return encode(context.Background(), a.em)
	case a.sweep != nil:
		return encode(context.Background(), a.sweep)
	}
	if a.st == nil {
		return nil, nil
	}
	return encode(context.Background(), a.st)
}

// decodeAcc parses statistics of either kind; no bytes are none.
func decodeAcc(b []byte) (statsAcc, error) {
	sw, err := lda.DecodeSweepEMStats(b)
	if !errors.Is(err, statsfile.ErrModel) {
		return statsAcc{sweep: sw}, err
	}
	st, err := decode(b)
	if !errors.Is(err, statsfile.ErrModel) {
		return statsAcc{st: st}, err
	}
	d, err := implicit.DecodeDenseStats(b)
	if !errors.Is(err, statsfile.ErrModel) {
		return statsAcc{dense: d}, err
	}
	em, err := lda.DecodeEMStats(b)
	return statsAcc{em: em}, err
}

// empty reports whether a holds no statistics.
func (a statsAcc) empty() bool {
	return a.st == nil && a.dense == nil && a.em == nil && a.sweep == nil
}

// mergeFn is the Beam combiner of shard statistics: its merge is the
// library's (implicit.TopicStats.Merge, implicit.DenseStats.Merge,
// lda.EMStats.Merge, lda.SweepEMStats.Merge), exact and
// independent of the order and grouping the runner chooses, and it refuses
// what `streamfit merge` refuses (statistics of another fit, or covering an
// input twice). Empty inputs (a power pass not taken) are skipped.
type mergeFn struct{}

// CreateAccumulator returns an empty accumulator.
func (*mergeFn) CreateAccumulator() statsAcc { return statsAcc{} }

// AddInput merges encoded statistics into a.
func (f *mergeFn) AddInput(a statsAcc, in []byte) (statsAcc, error) {
	b, err := decodeAcc(in)
	if err != nil {
		return a, fmt.Errorf("merge: %w", err)
	}
	return f.MergeAccumulators(a, b)
}

// MergeAccumulators merges b into a.
func (*mergeFn) MergeAccumulators(a, b statsAcc) (statsAcc, error) {
	var err error
	switch {
	case a.empty():
		return b, nil
	case b.empty():
		return a, nil
	case a.st != nil && b.st != nil:
		err = a.st.Merge(b.st)
	case a.dense != nil && b.dense != nil:
		err = a.dense.Merge(b.dense)
	case a.em != nil && b.em != nil:
		err = a.em.Merge(b.em)
	case a.sweep != nil && b.sweep != nil:
		err = a.sweep.Merge(b.sweep)
	default:
		err = errors.New("statistics of different kinds (a topic model's, a dense model's, an EM pass's, a sweep's EM pass's)")
	}
	if err != nil {
		return a, fmt.Errorf("merge: %w", err)
	}
	return a, nil
}

// ExtractOutput returns the merged statistics, encoded (no bytes when
// every input was empty).
func (*mergeFn) ExtractOutput(a statsAcc) ([]byte, error) { return encodeAcc(a) }
