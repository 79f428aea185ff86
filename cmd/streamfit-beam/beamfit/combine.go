package beamfit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
)

// statsAcc is the accumulator of mergeFn: the statistics merged so far
// (nil: none yet, or only empty inputs).
type statsAcc struct {
	st *implicit.Stats
}

// encodeAcc and decodeAcc are the Beam coder of statsAcc: the statistics
// file format, exact totals included, so that a runner may ship partial
// merges between workers without changing the result.
func encodeAcc(a statsAcc) ([]byte, error) { return encode(context.Background(), a.st) }

func decodeAcc(b []byte) (statsAcc, error) {
	st, err := decode(b)
	return statsAcc{st}, err
}

// mergeFn is the Beam combiner of shard statistics: its merge is the
// library's (implicit.Stats.Merge), exact and independent of the order and
// grouping the runner chooses, and it refuses what `streamfit merge`
// refuses (statistics of another fit, or covering an input twice). Empty
// inputs (a power pass not taken) are skipped.
type mergeFn struct{}

// CreateAccumulator returns an empty accumulator.
func (*mergeFn) CreateAccumulator() statsAcc { return statsAcc{} }

// AddInput merges encoded statistics into a.
func (f *mergeFn) AddInput(a statsAcc, in []byte) (statsAcc, error) {
	st, err := decode(in)
	if err != nil {
		return a, fmt.Errorf("merge: %w", err)
	}
	return f.MergeAccumulators(a, statsAcc{st})
}

// MergeAccumulators merges b into a.
func (*mergeFn) MergeAccumulators(a, b statsAcc) (statsAcc, error) {
	switch {
	case a.st == nil:
		return b, nil
	case b.st == nil:
		return a, nil
	}
	if err := a.st.Merge(b.st); err != nil {
		return a, fmt.Errorf("merge: %w", err)
	}
	return a, nil
}

// ExtractOutput returns the merged statistics, encoded (no bytes when
// every input was empty).
func (*mergeFn) ExtractOutput(a statsAcc) ([]byte, error) {
	return encode(context.Background(), a.st)
}
