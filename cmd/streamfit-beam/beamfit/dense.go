package beamfit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// dense reports whether the fit is of a dense model (the GMM), whose passes
// are those of its shard workflow (shard.GMM): pass 1 (first and second
// moments), then pass 2 (the whitened third moment) against the merged
// pass 1.
func (s Settings) dense() bool { return s.Model == "gmm" }

// gmmConfig is the gmm.Config of the settings, as `streamfit stats` and
// `fit gmm` build it from their flags.
func (s Settings) gmmConfig() gmm.Config {
	return gmm.Config{K: s.K, Differing: s.Differing, Sigma2: s.Sigma2, ExactDim: s.ExactDim,
		Oversample: s.Oversample, PowerIters: s.PowerIters, Solver: s.Solver, Restarts: s.Restarts,
		Iters: s.Iters, Seed: s.Seed, Workers: s.Workers}
}

// denseUnitStats computes the encoded statistics of a dense model's pass
// over the sample rows of u, read with o: pass 1 when basis is nil, else
// the pass after the merged statistics basis. They record u as their
// input.
func denseUnitStats(ctx context.Context, u Unit, o stream.Options, basis *implicit.DenseStats, s Settings) ([]byte, error) {
	part := shard.Part{Path: u.Input.Path}
	if u.Piece >= 0 {
		part.Pieces = &[2]int64{int64(u.Piece), int64(u.Piece) + 1}
	}
	st, err := shard.GMM(s.gmmConfig()).Stats(ctx, []shard.Part{part}, o, basis)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", u, err)
	}
	if in := st.Header.Inputs[0]; in.Fingerprint != u.Input.Fingerprint || (u.Piece >= 0 && *in.Docs != *u.Input.Docs) {
		return nil, fmt.Errorf("%v: the file changed after the pipeline was planned", u)
	}
	st.Header.Inputs = []implicit.Input{u.Input}
	return encode(ctx, st)
}

// writeDense is write for the merged statistics of a dense model: the
// model is fitted by gmm.FitStats, as `streamfit fit gmm --from-stats`
// does.
func (o Output) writeDense(ctx context.Context, st *implicit.DenseStats) error {
	st.Header.Inputs = coalesce(st.Header.Inputs)
	return o.outputs(func() error { return implicit.WriteDenseStats(ctx, o.Stats, st) }, func() error {
		m, err := gmm.FitStats(ctx, st, o.Fit.gmmConfig())
		if err != nil {
			return err
		}
		if o.NoTiming {
			m.Stats.Seconds = 0
		}
		return m.Write(o.Model)
	})
}
