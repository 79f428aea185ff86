package beamfit

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// DenseModels are the dense models the pipeline fits (Settings.Model),
// through their shard workflows (models/shard).
var DenseModels = shard.DenseModels

// dense reports whether the fit is of a dense model, whose passes are
// those of its shard workflow: pass 1, then each pass against the merged
// pass before, until the statistics hold all the fit needs.
func (s Settings) dense() bool { return slices.Contains(DenseModels, s.Model) }

// denseStages is the number of passes the pipeline has room for: the most
// the model's workflow can take with the settings (shard.Dense.MaxPasses).
// Whether GMM and ICA whiten exactly or through the sketch depends on the
// width of the rows, which only the data tell, and a Beam pipeline is
// built before it reads them: on the exact path (or when ICA's polishing
// converges early) the stages after the last pass the plan takes read
// nothing (nextFn) and pass its statistics through.
func (s Settings) denseStages() int { return s.workflow().MaxPasses }

// The configurations of the dense models, as `streamfit stats` and
// `streamfit fit MODEL` build them from their flags.

func (s Settings) gmmConfig() gmm.Config {
	return gmm.Config{K: s.K, Differing: s.Differing, Sigma2: s.Sigma2, ExactDim: s.ExactDim,
		Oversample: s.Oversample, PowerIters: s.PowerIters, Solver: s.Solver, Restarts: s.Restarts,
		Iters: s.Iters, Seed: s.Seed, Workers: s.Workers}
}

func (s Settings) icaConfig() ica.Config {
	return ica.Config{K: s.K, ExactDim: s.ExactDim, Oversample: s.Oversample, PowerIters: s.PowerIters,
		Solver: s.Solver, Restarts: s.Restarts, Iters: s.Iters, Seed: s.Seed, Workers: s.Workers}
}

func (s Settings) multiviewConfig() multiview.Config {
	return multiview.Config{K: s.K, Views: s.Views, RandomViews: s.RandomViews, Rotate: s.Rotate, Solver: s.Solver,
		Restarts: s.Restarts, Iters: s.Iters, Seed: s.Seed, Workers: s.Workers}
}

func (s Settings) hmmConfig() hmm.Config {
	return hmm.Config{K: s.K, Windows: s.Windows, Discrete: s.Discrete, Solver: s.Solver,
		Restarts: s.Restarts, Iters: s.Iters, Seed: s.Seed}
}

func (s Settings) markovConfig() markov.Config {
	return markov.Config{K: s.K, Alpha0: s.Alpha0, R: s.R, Sigma2: s.Sigma2, Solver: s.Solver,
		Restarts: s.Restarts, Iters: s.Iters, Seed: s.Seed, Workers: s.Workers}
}

// workflow is the shard workflow of the dense model.
func (s Settings) workflow() shard.Dense {
	switch s.Model {
	case "ica":
		return shard.ICA(s.icaConfig())
	case "multiview":
		return shard.Multiview(s.multiviewConfig())
	case "hmm":
		return shard.HMM(s.hmmConfig())
	case "markov", "hmm-snapshot":
		return shard.Markov(s.markovConfig(), s.Model == "markov")
	}
	return shard.GMM(s.gmmConfig())
}

// denseUnitStats computes the encoded statistics of a dense model's pass
// over the sample rows of u, read with o: pass 1 when basis is nil, else
// the pass after the merged statistics basis, or none (no bytes) when basis
// holds all the fit needs. They record u as their input.
func denseUnitStats(ctx context.Context, u Unit, o stream.Options, basis *implicit.DenseStats, s Settings) ([]byte, error) {
	u.pin()
	w := s.workflow()
	part := shard.Part{Path: u.Input.Path}
	if u.Piece >= 0 {
		part.Pieces = &[2]int64{int64(u.Piece), int64(u.Piece) + 1}
	}
	st, err := w.Stats(ctx, []shard.Part{part}, o, basis)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", u, err)
	}
	if in := st.Header.Inputs[0]; in.Fingerprint != u.Input.Fingerprint || (u.Piece >= 0 && *in.Docs != *u.Input.Docs) {
		return nil, fmt.Errorf("%v: the file changed after the pipeline was planned", u)
	}
	st.Header.Inputs = []implicit.Input{u.Input}
	return encode(ctx, st)
}

// denseTemplate is the template of a dense model's pass after the merged
// statistics merged (encoded): merged itself, or none (no bytes) when they
// hold all the fit needs (the plan's last pass), so that the stages after
// it read nothing. Whether they do is decided here once, not in each unit.
func denseTemplate(ctx context.Context, merged []byte, s Settings) ([]byte, error) {
	if len(merged) == 0 {
		return nil, fmt.Errorf("%s: no statistics to start the next pass from (no rows?)", s.Model)
	}
	st, err := implicit.DecodeDenseStats(merged)
	if err != nil {
		return nil, err
	}
	if last, err := s.workflow().Last(ctx, st); err != nil || last {
		return nil, err
	}
	return merged, nil
}

// writeDense is write for the merged statistics of a dense model's last
// pass: the model is fitted by the model's FitStats, as `streamfit fit
// MODEL --from-stats` does.
func (o Output) writeDense(ctx context.Context, st *implicit.DenseStats) error {
	st.Header.Inputs = coalesce(st.Header.Inputs)
	return o.outputs(func() error { return implicit.WriteDenseStats(ctx, o.Stats, st) }, func() error {
		write, err := o.Fit.fitDense(ctx, st, o.NoTiming)
		if err != nil {
			return err
		}
		return write(o.Model)
	})
}

// fitDense fits the dense model from the merged statistics of its last
// pass and returns the function that writes it; noTiming leaves the fit's
// wall time out.
func (s Settings) fitDense(ctx context.Context, st *implicit.DenseStats, noTiming bool) (func(string) error, error) {
	switch s.Model {
	case "ica":
		return fitted(ica.FitStats(ctx, st, s.icaConfig()))(func(m *ica.Model) { zero(noTiming, &m.Stats.Seconds) })
	case "multiview":
		return fitted(multiview.FitStats(ctx, st, s.multiviewConfig()))(func(m *multiview.Model) { zero(noTiming, &m.Stats.Seconds) })
	case "hmm":
		return fitted(hmm.FitStats(ctx, st, s.hmmConfig()))(func(m *hmm.Model) { zero(noTiming, &m.Stats.Seconds) })
	case "markov", "hmm-snapshot":
		return fitted(markov.FitStats(ctx, st, s.markovConfig()))(func(m *markov.Model) { zero(noTiming, &m.Stats.Seconds) })
	}
	return fitted(gmm.FitStats(ctx, st, s.gmmConfig()))(func(m *gmm.Model) { zero(noTiming, &m.Stats.Seconds) })
}

// fitted turns a fit's result into fitDense's: the model's Write after
// adjust.
func fitted[M interface{ Write(string) error }](m M, err error) func(adjust func(M)) (func(string) error, error) {
	return func(adjust func(M)) (func(string) error, error) {
		if err != nil {
			return nil, err
		}
		adjust(m)
		return m.Write, nil
	}
}

// zero sets *v to 0 when on.
func zero(on bool, v *float64) {
	if on {
		*v = 0
	}
}
