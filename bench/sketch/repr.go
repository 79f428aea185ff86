package sketchbench

import (
	"context"

	"github.com/streamfit/streamfit/implicit"
)

// Explicit accumulates the packed k×k×k tensor (a TripleAcc pass on
// c.Workers goroutines), corrects and re-whitens it. It returns the tensor
// and its size in bytes.
func (c *Corpus) Explicit(ctx context.Context) (*Prepared, int64, error) {
	d, k := c.W.Dims()
	acc := implicit.NewTripleAcc(d, k)
	if err := acc.Pass(ctx, c.Src.Docs, c.Workers, c.W, nil); err != nil {
		return nil, 0, err
	}
	mom, err := acc.Moments(c.W, c.Workers)
	if err != nil {
		return nil, 0, err
	}
	p, b, err := c.Rewhiten(mom.M1, mom.E2)
	if err != nil {
		return nil, 0, err
	}
	c.Correction(mom.M1, mom.E2).AddTo(mom.E3)
	return &Prepared{T: implicit.Transform(mom.E3, p), B: b}, int64(len(mom.E3.Data)) * 8, nil
}

// Sketched accumulates the tensor sketch (a SketchAcc pass), sketches the
// W-terms and the correction, and re-whitens implicitly. It returns the
// tensor and the sketch's size in bytes.
func (c *Corpus) Sketched(ctx context.Context, cfg implicit.SketchConfig) (*Prepared, int64, error) {
	d, k := c.W.Dims()
	acc := implicit.NewSketchAcc(d, k, cfg)
	if err := acc.Pass(ctx, c.Src.Docs, c.Workers, c.W, nil); err != nil {
		return nil, 0, err
	}
	mom, err := acc.Moments(c.W, c.Workers)
	if err != nil {
		return nil, 0, err
	}
	p, b, err := c.Rewhiten(mom.M1, mom.E2)
	if err != nil {
		return nil, 0, err
	}
	mom.Correct(c.Correction(mom.M1, mom.E2))
	return &Prepared{T: &implicit.Transformed{T: mom.E3, P: p}, B: b}, mom.E3.Bytes(), nil
}

// Rows stores the whitened rows on disk under dir (a RowAcc pass) and
// returns the streamed operator, corrected and re-whitened, the compressed
// size in bytes and the accumulator (Close removes the files).
func (c *Corpus) Rows(ctx context.Context, dir string, opt implicit.RowStoreOptions) (*Prepared, int64, *implicit.RowAcc, error) {
	d, k := c.W.Dims()
	acc, err := implicit.NewRowAcc(d, k, dir, opt)
	if err != nil {
		return nil, 0, nil, err
	}
	fail := func(err error) (*Prepared, int64, *implicit.RowAcc, error) {
		acc.Close()
		return nil, 0, nil, err
	}
	if err := acc.Pass(ctx, c.Src.Docs, c.Workers, c.W, nil); err != nil {
		return fail(err)
	}
	op, err := acc.Operator(c.W)
	if err != nil {
		return fail(err)
	}
	mom, err := acc.Moments(c.W, c.Workers)
	if err != nil {
		return fail(err)
	}
	p, b, err := c.Rewhiten(mom.M1, mom.E2)
	if err != nil {
		return fail(err)
	}
	t := &implicit.Transformed{T: &implicit.Corrected{T: op, C: *c.Correction(mom.M1, mom.E2)}, P: p}
	return &Prepared{T: t, B: b}, acc.Store.Bytes(), acc, nil
}
