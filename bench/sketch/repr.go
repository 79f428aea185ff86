package sketchbench

import (
	"context"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

// accumulate runs one pass with accs[w] taking worker w's batches and
// merges them, in worker order, into accs[0].
func accumulate[A interface{ Merge(A) error }](ctx context.Context, c *Corpus, accs []A, add func(A, *stream.Docs) error) (A, error) {
	err := c.Pass(ctx, func(w int, b *stream.Docs) error { return add(accs[w], b) })
	for _, a := range accs[1:] {
		if err != nil {
			break
		}
		err = accs[0].Merge(a)
	}
	return accs[0], err
}

// Explicit accumulates the packed k×k×k tensor (one TripleAcc per worker),
// corrects and re-whitens it. It returns the tensor and its size in bytes.
func (c *Corpus) Explicit(ctx context.Context) (*Prepared, int64, error) {
	d, k := c.W.Dims()
	accs := make([]*implicit.TripleAcc, c.Workers)
	for i := range accs {
		accs[i] = implicit.NewTripleAcc(d, k)
	}
	acc, err := accumulate(ctx, c, accs, func(a *implicit.TripleAcc, b *stream.Docs) error { a.Add(b, c.W); return nil })
	if err != nil {
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

// Sketched accumulates the tensor sketch (one SketchAcc per worker), sketches
// the W-terms and the correction, and re-whitens implicitly. It returns the
// tensor and the sketch's size in bytes.
func (c *Corpus) Sketched(ctx context.Context, cfg implicit.SketchConfig) (*Prepared, int64, error) {
	d, k := c.W.Dims()
	accs := make([]*implicit.SketchAcc, c.Workers)
	accs[0] = implicit.NewSketchAcc(d, k, cfg)
	for i := 1; i < len(accs); i++ {
		accs[i] = accs[0].Empty()
	}
	acc, err := accumulate(ctx, c, accs, func(a *implicit.SketchAcc, b *stream.Docs) error { a.Add(b, c.W); return nil })
	if err != nil {
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

// Rows stores the whitened rows on disk under dir (one RowAcc per worker,
// merged) and returns the streamed operator, corrected and re-whitened, the
// compressed size in bytes and the accumulator (Close removes the files).
func (c *Corpus) Rows(ctx context.Context, dir string, opt implicit.RowStoreOptions) (*Prepared, int64, *implicit.RowAcc, error) {
	d, k := c.W.Dims()
	accs := make([]*implicit.RowAcc, c.Workers)
	for i := range accs {
		a, err := implicit.NewRowAcc(d, k, dir, opt)
		if err != nil {
			for _, a := range accs[:i] {
				a.Close()
			}
			return nil, 0, nil, err
		}
		accs[i] = a
	}
	fail := func(err error) (*Prepared, int64, *implicit.RowAcc, error) {
		for _, a := range accs {
			a.Close()
		}
		return nil, 0, nil, err
	}
	if _, err := accumulate(ctx, c, accs, func(a *implicit.RowAcc, b *stream.Docs) error { return a.Add(b, c.W) }); err != nil {
		return fail(err)
	}
	op, err := accs[0].Operator(c.W)
	if err != nil {
		return fail(err)
	}
	m1, e2, err := accs[0].Pair(c.W)
	if err != nil {
		return fail(err)
	}
	p, b, err := c.Rewhiten(m1, e2)
	if err != nil {
		return fail(err)
	}
	t := &implicit.Transformed{T: &implicit.Corrected{T: op, C: *c.Correction(m1, e2)}, P: p}
	return &Prepared{T: t, B: b}, accs[0].Store.Bytes(), accs[0], nil
}
