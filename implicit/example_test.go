package implicit_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
)

// The first pass of a dense model's fit (the totals Σx, Σ‖x‖² and Σxxᵀ of
// the rows) over two shards cut at a batch boundary, merged, gives the
// totals of all the rows bit for bit, and the statistics survive the
// statistics file's encoding unchanged.
func ExampleMomentPass() {
	ctx := context.Background()
	rows := func(lo, hi int) *stream.MemoryDense {
		b := stream.NewDense(int64(lo), 3)
		for i := lo; i < hi; i++ {
			x := float64(i)
			b.AppendRow([]float64{x / 7, 1 / (1 + x), x * x / 1e4})
		}
		return &stream.MemoryDense{All: b, BatchRows: 64}
	}
	accept := func(*stream.Dense) error { return nil }
	pass, err := implicit.MomentPass(statsfile.Header{Model: "example", Phase: 1, D: 3, K: 2}, 100, accept)
	if err != nil {
		panic(err)
	}
	a, err := pass.Run(ctx, rows(0, 640).Rows, 2)
	if err != nil {
		panic(err)
	}
	b, err := pass.Run(ctx, rows(640, 1000).Rows, 2)
	if err != nil {
		panic(err)
	}
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	all, err := pass.Run(ctx, rows(0, 1000).Rows, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("rows:", a.Rows, "shards:", a.Header.Shards)
	fmt.Println("merged shards equal the whole:", slices.Equal(a.Sum("second"), all.Sum("second")))

	var buf bytesBuffer
	if err := a.Encode(ctx, &buf); err != nil {
		panic(err)
	}
	back, err := implicit.DecodeDenseStats(buf)
	if err != nil {
		panic(err)
	}
	fmt.Println("decoded equals encoded:", slices.Equal(back.Sum("sum"), a.Sum("sum")) && back.Rows == a.Rows)
	// Output:
	// rows: 1000 shards: 2
	// merged shards equal the whole: true
	// decoded equals encoded: true
}

// bytesBuffer collects what is written to it.
type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
