package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// Dense is the workflow of a dense model's fit (GMM, ICA, multi-view,
// Markov chains and HMMs): its passes come from the model's planner.
type Dense struct {
	// Plan returns the model's planner with the fit's settings, naming path
	// (an input file) in its errors.
	Plan func(path string) implicit.Planner
	// Grouped makes every shard own whole groups of rows (Part.Groups):
	// for the models whose passes read sequences or sets in order.
	Grouped bool
	// MaxPasses is the most passes the fit takes, whatever the data: a
	// pipeline built before it reads them sizes its stages by it.
	MaxPasses int
}

// Basiser is implemented by planners whose passes after the first project
// on a basis computed from the pass before (a whitening): Basis returns
// the basis the pass after the statistics st would use, or that st's pass
// used; Append measures its drift.
type Basiser interface {
	Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error)
}

// ErrDrift reports an append refused because the basis of the statistics
// appended to has drifted beyond the tolerance from the one the updated
// statistics of the pass before give: the pass must be recomputed over all
// the data.
var ErrDrift = errors.New("the basis has drifted beyond the tolerance")

// pass returns the pass after basis (the first when basis is nil) for the
// data of d columns at path.
func (m Dense) pass(ctx context.Context, path string, d int, basis *implicit.DenseStats) (*implicit.Pass, error) {
	p := m.Plan(path)
	if basis == nil {
		return p.First(d)
	}
	next, err := p.Next(ctx, basis)
	if err == nil && next == nil {
		err = fmt.Errorf("the statistics of pass %d hold all a fit needs: fit from them", basis.Header.Phase)
	}
	return next, err
}

// Stats computes the statistics of one pass over parts, as one shard: the
// first pass when basis is nil, else the pass after the merged statistics
// basis. Every part is recorded as an input of the statistics.
func (m Dense) Stats(ctx context.Context, parts []Part, o stream.Options, basis *implicit.DenseStats) (*implicit.DenseStats, error) {
	return m.run(ctx, parts, o, func(path string, d int) (*implicit.Pass, error) { return m.pass(ctx, path, d, basis) })
}

// run computes the statistics of the pass that pass returns over parts.
func (m Dense) run(ctx context.Context, parts []Part, o stream.Options, pass func(path string, d int) (*implicit.Pass, error)) (*implicit.DenseStats, error) {
	if len(parts) == 0 {
		return nil, errors.New("no input")
	}
	var total *implicit.DenseStats
	for _, part := range parts {
		part.Groups = part.Groups || m.Grouped
		src, desc, err := OpenDense(part, o)
		if err != nil {
			return nil, err
		}
		st, err := func() (*implicit.DenseStats, error) {
			defer stream.Close(src)
			p, err := pass(part.Path, src.Info().Cols)
			if err != nil {
				return nil, err
			}
			return p.Run(ctx, src.Rows, o.Workers)
		}()
		if err != nil {
			return nil, err
		}
		st.Header.Inputs = []statsfile.Input{desc}
		if total == nil {
			total = st
		} else if err := total.Merge(st); err != nil {
			return nil, fmt.Errorf("%s: %w", part.Path, err)
		}
	}
	total.Header.Shards = 1
	return total, nil
}

// Passes runs every pass of the fit over parts in turn, each over all of
// them, and returns the statistics of the last: what `fit --from-stats`
// takes, and what a fit over the parts computes.
func (m Dense) Passes(ctx context.Context, parts []Part, o stream.Options) (*implicit.DenseStats, error) {
	var st *implicit.DenseStats
	for {
		next, err := m.Stats(ctx, parts, o, st)
		if err != nil {
			return nil, err
		}
		st = next
		p, err := m.Plan("").Next(ctx, st)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return st, nil
		}
	}
}

// Last reports whether the statistics st hold all a fit needs (the last
// pass).
func (m Dense) Last(ctx context.Context, st *implicit.DenseStats) (bool, error) {
	p, err := m.Plan("").Next(ctx, st)
	return p == nil, err
}

// Append adds the statistics of parts to last, computed by last's pass with
// last's basis, and returns the sum; parts that last covers are refused
// (a *CoveredError). When updated is given (the merged statistics of
// the pass before last's, over all the data, the new included) and the
// model's passes have a basis, the largest principal angle between the
// basis updated gives and last's is returned, and beyond tol the append is
// refused with ErrDrift: last's pass must then be recomputed over all the
// data with updated as its basis.
func (m Dense) Append(ctx context.Context, last *implicit.DenseStats, parts []Part, o stream.Options, updated *implicit.DenseStats, tol float64) (*implicit.DenseStats, float64, error) {
	if _, err := m.Plan("").Like(ctx, last); err != nil {
		return nil, 0, err
	}
	err := checkCovered(last.Header, parts, func(p Part) (statsfile.Input, error) {
		src, desc, err := OpenDense(p, o)
		stream.Close(src)
		return desc, err
	})
	if err != nil {
		return nil, 0, err
	}
	var angle float64
	if updated != nil {
		if updated.Header.Phase != last.Header.Phase-1 {
			return nil, 0, fmt.Errorf("the updated statistics are of pass %d, not of pass %d before the appended pass %d", updated.Header.Phase, last.Header.Phase-1, last.Header.Phase)
		}
		b, ok := m.Plan("").(Basiser)
		if !ok {
			return nil, 0, errors.New("the model's passes have no basis whose drift to check")
		}
		now, err := b.Basis(ctx, updated)
		if err != nil {
			return nil, 0, err
		}
		was, err := b.Basis(ctx, last)
		if err != nil {
			return nil, 0, err
		}
		if angle, err = lda.SubspaceAngle(now, was); err != nil {
			return nil, 0, err
		}
		if angle > tol {
			return nil, angle, fmt.Errorf("%w: %.3g rad > %.3g", ErrDrift, angle, tol)
		}
	}
	add, err := m.run(ctx, parts, o, func(path string, d int) (*implicit.Pass, error) {
		if d != last.Header.D {
			return nil, fmt.Errorf("%s: rows of %d columns, the statistics' of %d", path, d, last.Header.D)
		}
		return m.Plan(path).Like(ctx, last)
	})
	if err != nil {
		return nil, angle, err
	}
	sum := *last
	sum.Sums = nil
	for _, t := range last.Sums {
		c := implicit.NewWideSums(t.Name, t.Len())
		if err := c.Merge(t); err != nil {
			return nil, angle, err
		}
		sum.Sums = append(sum.Sums, c)
	}
	if err := sum.Merge(add); err != nil {
		return nil, angle, err
	}
	return &sum, angle, nil
}

// MergeFiles reads the dense statistics files at paths and merges them.
func MergeFiles(paths []string) (*implicit.DenseStats, error) {
	return mergeFiles(paths, implicit.ReadDenseStats, (*implicit.DenseStats).Merge)
}

// mergeFiles reads the statistics files at paths with read and merges them
// in order with merge; a *MergeError names the file a merge refused.
func mergeFiles[S any](paths []string, read func(string) (*S, error), merge func(total, o *S) error) (*S, error) {
	if len(paths) == 0 {
		return nil, errors.New("no statistics to merge")
	}
	total, err := read(paths[0])
	if err != nil {
		return nil, err
	}
	for _, p := range paths[1:] {
		o, err := read(p)
		if err != nil {
			return nil, err
		}
		if err := merge(total, o); err != nil {
			return nil, &MergeError{Path: p, Err: err}
		}
	}
	return total, nil
}
