package multiview_test

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream/synth"
)

func TestMemoryIndependentOfRows(t *testing.T) {
	memtest.Check(t, 10000, 2<<20, func(rows int64) error {
		src, err := synth.NewMultiView(synth.MultiViewConfig{Rows: rows, Dims: [3]int{10, 12, 14}, K: 3, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			return err
		}
		_, err = multiview.Fit(context.Background(), src, multiview.Config{K: 3, Views: src.Truth.Views, Seed: 1})
		return err
	})
}
