package markov

import (
	"context"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// pairPass runs pass 1's set reader over src and returns its averages.
func pairPass(ctx context.Context, src stream.DenseSource, d, workers int, check func(*stream.Dense, int) error) (*pairStats, error) {
	tri := d * (d + 1) / 2
	p := &implicit.Pass{
		Header:  statsfile.Header{Model: "markov", Phase: 1, D: d},
		Sums:    []implicit.SumShape{{Name: "sum", Len: d}, {Name: "xx", Len: tri}, {Name: "c2", Len: tri}, {Name: "sets", Len: 1}},
		Ordered: true,
		Worker: func() implicit.BatchFunc {
			return newSetReader(src.Info().Path, d, check, newPairPiece(d)).batch
		},
	}
	st, err := p.Run(ctx, src.Rows, workers)
	if err != nil {
		return nil, err
	}
	ps, _, err := carried(st)
	return ps, err
}

// triplePass runs pass 2's set reader over src and returns its averages.
func triplePass(ctx context.Context, src stream.DenseSource, d int, wSet, wPoint *mat.Dense, workers int) (*tripleStats, error) {
	_, k := wSet.Dims()
	n3 := len(solver.NewSym3(k).Data)
	p := &implicit.Pass{
		Header:  statsfile.Header{Model: "hmm-snapshot", Phase: 2, D: d},
		Sums:    []implicit.SumShape{{Name: "c3", Len: n3}, {Name: "sets", Len: 1}, {Name: "v3", Len: n3}},
		Ordered: true,
		Worker: func() implicit.BatchFunc {
			return newSetReader(src.Info().Path, d, nil, newTriplePiece(wSet, wPoint)).batch
		},
	}
	st, err := p.Run(ctx, src.Rows, workers)
	if err != nil {
		return nil, err
	}
	sets := st.Sum("sets")[0]
	ts := &tripleStats{rows: st.Rows, sets: int64(sets), c3: &solver.Sym3{K: k, Data: st.Sum("c3")}, v3: &solver.Sym3{K: k, Data: st.Sum("v3")}}
	ts.c3.Scale(1 / sets)
	ts.v3.Scale(1 / float64(st.Rows))
	return ts, nil
}
