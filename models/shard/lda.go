package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// Phase names a pass of an LDA (or single-topic) fit's statistics route.
type Phase string

// The phases of LDA's statistics route (see lda.Phase1Stats): phase 1
// takes no basis; a power pass takes the merged statistics of phase 1 or
// of the power pass before; phase 2 takes the merged statistics of the
// last of those (or earlier phase-2 statistics, whose basis it reuses).
// PowerLike is a power pass with the Q of earlier power statistics (for a
// shard added to them).
const (
	Phase1    Phase = "1"
	Power     Phase = "power"
	PowerLike Phase = "power-like"
	Phase2    Phase = "2"
)

// LDA is the workflow of an LDA or single-topic fit with Config, through
// the lda package's entry points (Phase1Stats, PowerStats, PowerStatsLike,
// Phase2Stats, FitStats).
type LDA struct {
	Config lda.Config
}

// Stats computes the statistics of phase over parts, as one shard, with
// the merged statistics basis of the phase before (nil for phase 1). Every
// part is recorded as an input of the statistics.
func (w LDA) Stats(ctx context.Context, parts []Part, o stream.Options, phase Phase, basis *implicit.TopicStats) (*implicit.TopicStats, error) {
	if len(parts) == 0 {
		return nil, errors.New("no input")
	}
	if phase != Phase1 && basis == nil {
		return nil, fmt.Errorf("phase %s: %w", phase, errNoBasis)
	}
	// basis is not read after the first part's pass begins, so the basis
	// file's statistics (several d×k arrays at a large vocabulary) are
	// collected during it.
	total, err := w.partStats(ctx, parts[0], o, phase, basis)
	if err != nil {
		return nil, err
	}
	// The other parts take the projection the first one computed from
	// basis (the same one), instead of computing it again: total holds it.
	if phase == Power {
		phase = PowerLike
	}
	for _, p := range parts[1:] {
		st, err := w.partStats(ctx, p, o, phase, total)
		if err != nil {
			return nil, err
		}
		if err := total.Merge(st); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Path, err)
		}
	}
	total.Header.Shards = 1
	return total, nil
}

// partStats computes the statistics of phase over one part.
func (w LDA) partStats(ctx context.Context, p Part, o stream.Options, phase Phase, base *implicit.TopicStats) (*implicit.TopicStats, error) {
	src, desc, err := OpenDocs(p, o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	var st *implicit.TopicStats
	switch phase {
	case Phase1:
		st, err = lda.Phase1Stats(ctx, src, w.Config)
	case Power:
		st, err = lda.PowerStats(ctx, src, base, w.Config)
	case PowerLike:
		st, err = lda.PowerStatsLike(ctx, src, base, w.Config)
	case Phase2:
		st, err = lda.Phase2Stats(ctx, src, base, w.Config)
	default:
		return nil, fmt.Errorf("unknown phase %q", phase)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	st.Header.Inputs = []statsfile.Input{desc}
	return st, nil
}

// PhaseOf returns the phase of statistics with header h.
func PhaseOf(h statsfile.Header) Phase {
	switch {
	case h.Power > 0:
		return Power
	case h.Phase == 2:
		return Phase2
	}
	return Phase1
}

// Append adds the statistics of parts to last, computed with last's phase
// and basis (a power pass's Q, phase 2's W), and returns the sum in last;
// parts that last covers are refused (a *CoveredError). For phase-2
// statistics, updated (the merged phase-1 or power statistics over all the
// data, the new included; may be nil) gives the basis whose drift from
// last's is returned, and beyond tol the append is refused with ErrDrift:
// phase 2 must then be recomputed over all the data.
func (w LDA) Append(ctx context.Context, last *implicit.TopicStats, parts []Part, o stream.Options, updated *implicit.TopicStats, tol float64) (float64, error) {
	h := last.Header
	err := checkCovered(h, parts, func(p Part) (statsfile.Input, error) {
		src, desc, err := OpenDocs(p, o)
		stream.Close(src)
		return desc, err
	})
	if err != nil {
		return 0, err
	}
	phase, base := PhaseOf(h), (*implicit.TopicStats)(nil)
	var angle float64
	switch phase {
	case Power:
		phase, base = PowerLike, last
	case Phase2:
		base = last
		if updated != nil {
			var err error
			if angle, err = lda.BasisDrift(ctx, updated, last, w.Config); err != nil {
				return 0, err
			}
			if angle > tol {
				return angle, fmt.Errorf("%w: %.3g rad > %g", ErrDrift, angle, tol)
			}
		}
	}
	add, err := w.Stats(ctx, parts, o, phase, base)
	if err != nil {
		return angle, err
	}
	return angle, last.Merge(add)
}

// Drift is the basis phase 2 should use given the merged phase-1 (or power)
// statistics p1 and the running phase-2 statistics prev: prev, to reuse its
// W, while the largest principal angle between its W and p1's (returned) is
// at most tol, else p1 (a new W, whose phase 2 must be recomputed over all
// the data).
func (w LDA) Drift(ctx context.Context, p1, prev *implicit.TopicStats, tol float64) (*implicit.TopicStats, float64, error) {
	angle, err := lda.BasisDrift(ctx, p1, prev, w.Config)
	if err != nil {
		return nil, 0, err
	}
	if angle <= tol {
		return prev, angle, nil
	}
	return p1, angle, nil
}

// Fit fits the model from merged phase-2 statistics (lda.FitStats). The
// exact totals' low words serve merges only; they are dropped from st
// first, so that they are not held through the solve.
func (w LDA) Fit(ctx context.Context, st *implicit.TopicStats) (*models.Model, error) {
	st.Exact = nil
	return lda.FitStats(ctx, st, w.Config)
}

// MergeStatsFiles merges LDA statistics files: the first is read whole and
// the others are added to it as they are read, section by section
// (implicit.TopicStats.MergeFile), so the merge holds about one copy of the
// statistics. An error names the file it is about.
func MergeStatsFiles(ctx context.Context, paths []string) (*implicit.TopicStats, error) {
	if len(paths) == 0 {
		return nil, errors.New("no statistics to merge")
	}
	total, err := implicit.ReadTopicStats(paths[0])
	if err != nil {
		return nil, err
	}
	for _, p := range paths[1:] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := total.MergeFile(p); err != nil {
			return nil, &MergeError{Path: p, Err: err}
		}
	}
	return total, nil
}

// MergeError is an error of merging the statistics file Path.
type MergeError struct {
	Path string
	Err  error
}

func (e *MergeError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the merge's error.
func (e *MergeError) Unwrap() error { return e.Err }

// EMStats computes the statistics of the next EM pass of m (the spectral
// fit, or the model of the pass before: lda.EMStep) over parts, as one
// shard (lda.EMPassStats). Every part is recorded as an input of the
// statistics. It reports lda.ErrEMDone when m's passes have ended.
func (w LDA) EMStats(ctx context.Context, parts []Part, o stream.Options, m *models.Model) (*lda.EMStats, error) {
	if len(parts) == 0 {
		return nil, errors.New("no input")
	}
	var total *lda.EMStats
	for _, p := range parts {
		st, err := func() (*lda.EMStats, error) {
			src, desc, err := OpenDocs(p, o)
			if err != nil {
				return nil, err
			}
			defer stream.Close(src)
			st, err := lda.EMPassStats(ctx, src, m, w.Config)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Path, err)
			}
			st.Header.Inputs = []statsfile.Input{desc}
			return st, nil
		}()
		if err != nil {
			return nil, err
		}
		if total == nil {
			total = st
		} else if err := total.Merge(st); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Path, err)
		}
	}
	total.Header.Shards = 1
	return total, nil
}

// MergeEMStatsFiles reads the statistics files of an EM pass at paths and
// merges them (exactly, in any order); statistics of another pass or model,
// and shards that share an input, are refused (a *MergeError names the
// file).
func MergeEMStatsFiles(paths []string) (*lda.EMStats, error) {
	return mergeFiles(paths, lda.ReadEMStats, (*lda.EMStats).Merge)
}
