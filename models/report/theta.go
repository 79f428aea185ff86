package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/streamfit/streamfit/stream"
)

// Theta summarises a document–topic table.
type Theta struct {
	Docs int64
	// Dominant[t] counts the documents whose largest share is topic t
	// (the first such topic on a tie).
	Dominant []float64
	// Mean[t] is topic t's share averaged over the documents.
	Mean []float64
}

// ReadTheta streams a document–topic table (as `streamfit infer` writes:
// one row per document) and summarises it. Any dense layout that
// stream.OpenDense reads works — a list<float> or fixed_size_list<float>
// column of k shares (`streamfit infer` writes doc int64 and theta
// list<double>), or k numeric columns — with an optional integer id column:
// idCol, or when empty "doc" then "id" if present. A string id
// column is skipped by itself. Every row must hold k finite, non-negative
// shares; rows need not sum to 1. Memory does not grow with the rows.
func ReadTheta(ctx context.Context, path, idCol string, k, workers int) (*Theta, error) {
	src, err := openTheta(path, idCol, workers)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	// A list column's width is known from its first rows only.
	width := func(c int) error {
		if c != k {
			return fmt.Errorf("%s: %d topic shares per document but the model has k=%d topics (an integer id column other than \"doc\" or \"id\" must be named as the id column)", path, c, k)
		}
		return nil
	}
	if c := src.Info().Cols; c != 0 {
		if err := width(c); err != nil {
			return nil, err
		}
	}
	th := &Theta{Dominant: make([]float64, k), Mean: make([]float64, k)}
	// Shares are summed per batch and the batch sums added in order, so the
	// means do not depend on the number of workers.
	sum := make([]float64, k)
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		if err := width(b.Cols); err != nil {
			b.Release()
			return nil, err
		}
		clear(sum)
		for i := range b.Len() {
			row := b.Row(i)
			best := 0
			for t, x := range row {
				if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, fmt.Errorf("%s: row %d, column %d: share %g is not a finite non-negative number", path, b.Start+int64(i), t, x)
				}
				sum[t] += x
				if x > row[best] {
					best = t
				}
			}
			th.Dominant[best]++
		}
		for t := range sum {
			th.Mean[t] += sum[t]
		}
		th.Docs += int64(b.Len())
		b.Release()
	}
	if th.Docs == 0 {
		return nil, fmt.Errorf("%s: no documents", path)
	}
	for t := range th.Mean {
		th.Mean[t] /= float64(th.Docs)
	}
	return th, nil
}

// openTheta opens the table with its id column.
func openTheta(path, idCol string, workers int) (stream.DenseSource, error) {
	o := stream.Options{Workers: workers}
	if idCol != "" {
		o.GroupColumn = idCol
		return stream.OpenDense(path, o)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	// A table without (or with a non-integer) column of that name fails to
	// open with it; the next name is tried.
	for _, name := range []string{"doc", "id"} {
		o.GroupColumn = name
		if src, err := stream.OpenDense(path, o); err == nil {
			return src, nil
		}
	}
	o.GroupColumn = ""
	src, err := stream.OpenDense(path, o)
	if errors.Is(err, stream.ErrSchema) {
		// A corpus given for the shares: say what it is, not which dense
		// columns it lacks.
		if docs, derr := stream.Open(path, stream.Options{}); derr == nil {
			layout := docs.Info().Layout
			stream.Close(docs)
			return nil, fmt.Errorf("%s holds documents (the %s layout), not topic shares: give the table `streamfit infer` writes (one row of k shares per document)", path, layout)
		}
	}
	return src, err
}
