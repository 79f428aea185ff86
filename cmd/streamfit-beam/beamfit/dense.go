package beamfit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// denseStages is the number of passes the pipeline has room for: the most
// the model's workflow can take with the settings (models.Passes.MaxPasses).
// Whether GMM and ICA whiten exactly or through the sketch depends on the
// width of the rows, which only the data tell, and a Beam pipeline is
// built before it reads them: on the exact path (or when ICA's polishing
// converges early) the stages after the last pass the plan takes read
// nothing (nextFn) and pass its statistics through.
func (s Settings) denseStages() int {
	wf, err := s.workflow()
	if err != nil {
		return 1
	}
	return wf.MaxPasses
}

// workflow is the shard workflow of the dense model's moment fit: that
// of its refinement's start when one follows it.
func (s Settings) workflow() (shard.Dense, error) {
	ds, err := s.denseSettings()
	if err != nil {
		return shard.Dense{}, err
	}
	if r := models.RefinementOf(ds, s.common()); r != nil {
		return shard.DenseOf(r.Moments()), nil
	}
	return shard.DenseOf(ds.Passes(s.common())), nil
}

// denseUnitStats computes the encoded statistics of a dense model's pass
// over the sample rows of u, read with o: pass 1 when basis is nil, else
// the pass after the merged statistics basis, or none (no bytes) when basis
// holds all the fit needs. They record u as their input.
func denseUnitStats(ctx context.Context, u Unit, o stream.Options, basis *implicit.DenseStats, s Settings) ([]byte, error) {
	w, err := s.workflow()
	if err != nil {
		return nil, err
	}
	return workflowUnitStats(ctx, u, o, w, basis)
}

// workflowUnitStats is denseUnitStats with the workflow w.
func workflowUnitStats(ctx context.Context, u Unit, o stream.Options, w shard.Dense, basis *implicit.DenseStats) ([]byte, error) {
	u.pin()
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
	st.Header.Inputs = []statsfile.Input{u.Input}
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
	wf, err := s.workflow()
	if err != nil {
		return nil, err
	}
	if last, err := wf.Last(ctx, st); err != nil || last {
		return nil, err
	}
	return merged, nil
}

// writeDense is write for the merged statistics st of a dense model's
// last moment pass: the model is fit's (nil: fitted by the model's
// FitStats, as `streamfit fit MODEL --from-stats` does).
func (o Output) writeDense(ctx context.Context, st *implicit.DenseStats, fit func() (models.Fitted, error)) error {
	st.Header.Inputs = coalesce(st.Header.Inputs)
	if fit == nil {
		fit = func() (models.Fitted, error) { return o.Fit.fitDense(ctx, st) }
	}
	return o.outputs(func() error { return implicit.WriteDenseStats(ctx, o.Stats, st) }, func() error {
		m, err := fit()
		if err != nil {
			return err
		}
		if o.NoTiming {
			m.ClearTiming()
		}
		return m.Write(o.Model)
	})
}

// fitDense fits the dense model from the merged statistics of its last
// pass.
func (s Settings) fitDense(ctx context.Context, st *implicit.DenseStats) (models.Fitted, error) {
	ds, err := s.denseSettings()
	if err != nil {
		return nil, err
	}
	return ds.FitStats(ctx, st, s.common())
}
