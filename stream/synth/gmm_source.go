package synth

import (
	"context"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/streamfit/streamfit/stream"
)

// denseGen is the generated-table machinery shared by the dense generators
// (GMM, ICA, multi-view, HMM, Markov): the table is a sequence of items (a
// sample, a set, a sequence), each of rowsPer rows, generated in blocks of
// perBlock items. Block b draws from its own random stream, so every pass and
// every worker count gives the same rows.
type denseGen struct {
	layout   string
	items    int64
	rowsPer  int
	perBlock int
	cols     int
	seed     uint64
	workers  int
	grouped  bool
	// fill appends the rows of items lo..hi-1 to out (and their ids when grouped).
	fill func(r *rand.Rand, lo, hi int64, out *stream.Dense)
	// part, when set, appends n rows of item id: the item's own draws (a
	// set's proportions) come from item, which starts afresh for every part,
	// the rows' from rows. With it an item larger than a batch is cut into
	// batches of batchRows rows, so no batch, and no pass, holds a whole item.
	part func(item, rows *rand.Rand, id int64, n int, out *stream.Dense)
	// chunk is the number of rows per part (0: whole items).
	chunk int
}

// setup fills in the defaults: batchRows rows per batch, rounded to whole items.
func (g *denseGen) setup(batchRows, workers int) {
	if batchRows <= 0 {
		batchRows = stream.DefaultBatchRows
	}
	g.perBlock = max(1, batchRows/max(1, g.rowsPer))
	if g.part != nil && g.rowsPer > batchRows {
		g.chunk = batchRows
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g.workers = workers
}

func (g *denseGen) info() stream.Info {
	return stream.Info{Format: "generated", Layout: g.layout, Rows: g.items * int64(g.rowsPer), Cols: g.cols, NNZ: -1}
}

func (g *denseGen) rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	if g.chunk > 0 {
		return g.parts(ctx)
	}
	step := int64(g.perBlock)
	blocks := (g.items + step - 1) / step
	split := func(ctx context.Context, emit func(int64) bool) error {
		for b := int64(0); b < blocks && emit(b); b++ {
		}
		return nil
	}
	gen := func(ctx context.Context, b int64) (*stream.Dense, error) {
		lo := b * step
		hi := min(lo+step, g.items)
		out := stream.NewDense(lo*int64(g.rowsPer), g.cols)
		if g.grouped {
			out.Group = make([]int64, 0, int(hi-lo)*g.rowsPer)
		}
		g.fill(newRand(g.seed, uint64(b)+1), lo, hi, out)
		return out, nil
	}
	return stream.Ordered(ctx, g.workers, split, gen, (*stream.Dense).Release)
}

// parts generates the table in batches of chunk rows, each part of one item.
func (g *denseGen) parts(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	per := int64((g.rowsPer + g.chunk - 1) / g.chunk)
	split := func(ctx context.Context, emit func(int64) bool) error {
		for b := int64(0); b < g.items*per && emit(b); b++ {
		}
		return nil
	}
	gen := func(ctx context.Context, b int64) (*stream.Dense, error) {
		id, c := b/per, int(b%per)
		lo := c * g.chunk
		n := min(g.chunk, g.rowsPer-lo)
		out := stream.NewDense(id*int64(g.rowsPer)+int64(lo), g.cols)
		out.Group = make([]int64, 0, n)
		g.part(newRand(g.seed^0x7061727473, uint64(id)), newRand(g.seed, uint64(b)+1), id, n, out)
		return out, nil
	}
	return stream.Ordered(ctx, g.workers, split, gen, (*stream.Dense).Release)
}

// weights draws k mixing weights U(0.5, 1.5) normalised to sum to 1.
func weights(r *rand.Rand, k int) []float64 {
	w := make([]float64, k)
	var s float64
	for i := range w {
		w[i] = 0.5 + r.Float64()
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// gaussianColumns draws k vectors of length d with N(0,1) entries, each scaled
// to norm scale (scale 0 leaves them unscaled).
func gaussianColumns(r *rand.Rand, k, d int, scale float64) [][]float64 {
	out := make([][]float64, k)
	for i := range out {
		v := make([]float64, d)
		var s float64
		for j := range v {
			v[j] = r.NormFloat64()
			s += v[j] * v[j]
		}
		if scale > 0 {
			f := scale / math.Sqrt(s)
			for j := range v {
				v[j] *= f
			}
		}
		out[i] = v
	}
	return out
}
