package lda

import (
	"context"

	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// contractions reports the contractions of a solve through the tracker's
// hook. Over rows on disk or a tensor sketch every contraction is a pass
// over the rows or a set of FFTs (minutes apiece at k=1000), so a long fit
// would otherwise sit silent after its last data pass. It only wraps those
// tensors, which have no optional methods (solver.Slicer, solver.Normer)
// for the wrapper to hide.
type contractions struct {
	solver.Tensor
	track *tracker
	rows  int64 // rows per contraction, 0 for a sketch
	n     int
}

// reported returns t wrapped to report its contractions, when Fit has a
// progress hook and t is a contraction over rows or a sketch.
func (th *third) reported(t solver.Tensor) solver.Tensor {
	if th.track == nil || th.track.hook == nil || th.kind() == Explicit {
		return t
	}
	c := &contractions{Tensor: t, track: th.track}
	if th.op != nil {
		c.rows = th.op.Rows()
		th.op.Progress = func(read int64) { c.report(read, false) }
	}
	return c
}

// Apply counts the contraction and reports it begun and ended.
func (c *contractions) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	c.n++
	c.report(0, false)
	if err := c.Tensor.Apply(ctx, dst, theta); err != nil {
		return err
	}
	c.report(c.rows, true)
	return nil
}

// report sends the state of the current contraction; read is the rows read
// so far in it.
func (c *contractions) report(read int64, done bool) {
	c.track.send(func() Progress {
		return Progress{Pass: c.track.passes, Stage: "solve", Docs: read, Done: done, Contraction: c.n, Rows: c.rows}
	})
}
