package beamfit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/streamfit/streamfit/implicit/statsfile"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// The EM passes of the default LDA (and single-topic) fit, after the
// spectral fit of the merged phase-2 statistics: up to Settings.EMPasses
// stages, each the statistics of every work unit for the current model (a
// side input), merged exactly, and the M-step with the stopping rule
// (lda.EMStep) giving the next model. A Beam pipeline is static, so the
// pipeline holds a stage for every pass the cap allows; once the stopping
// rule has fired (lda.EMDone), the stages after it read no documents and
// pass the model through, so the model is the one-process fit's, which
// stops there.

// emPasses adds the EM stages after the merged phase-2 statistics p2 and
// returns the final model, encoded (modelBytes).
func emPasses(s beam.Scope, units, p2 beam.PCollection, o Options) beam.PCollection {
	model := beam.ParDo(s.Scope("spectral fit"), &spectralFn{Fit: o.Fit}, p2)
	for i := range o.Fit.EMPasses {
		ps := s.Scope(fmt.Sprintf("em pass %d", i+1))
		stats := beam.ParDo(ps, &emUnitFn{Read: o.Read, Fit: o.Fit}, units, beam.SideInput{Input: model})
		merged := beam.Combine(ps, &mergeFn{}, stats)
		model = beam.ParDo(ps, &emStepFn{Fit: o.Fit}, model, beam.SideInput{Input: merged})
	}
	return model
}

// modelBytes encodes a model between the stages (its JSON; Parse reads it
// back exactly).
func modelBytes(m *models.Model) ([]byte, error) { return json.Marshal(m) }

// spectralFn fits the spectral model from the merged phase-2 statistics,
// as `streamfit fit --from-stats` does: EM's start.
type spectralFn struct {
	Fit Settings `json:"fit"`
}

// ProcessElement returns the encoded spectral model of the merged
// statistics merged.
func (f *spectralFn) ProcessElement(ctx context.Context, merged []byte) ([]byte, error) {
	st, err := decode(merged)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("no statistics to fit (no documents?)")
	}
	st.Exact = nil
	m, err := lda.FitStats(ctx, st, f.Fit.config())
	if err != nil {
		return nil, err
	}
	return modelBytes(m)
}

// modelCache keeps the model parsed from the last side input, the same for
// every element of a stage.
type modelCache struct {
	raw []byte
	m   *models.Model
}

// get returns the model encoded in b.
func (c *modelCache) get(b []byte) (*models.Model, error) {
	if c.m != nil && bytes.Equal(c.raw, b) {
		return c.m, nil
	}
	m, err := models.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c.raw, c.m = b, m
	return m, nil
}

// emUnitFn computes the statistics of an EM pass over a work unit for the
// current model (a side input); none once the model's passes have ended.
type emUnitFn struct {
	Read stream.Options `json:"read"`
	Fit  Settings       `json:"fit"`

	model modelCache
}

// ProcessElement returns the encoded EM statistics of u.
func (f *emUnitFn) ProcessElement(ctx context.Context, u Unit, model []byte) ([]byte, error) {
	m, err := f.model.get(model)
	if err != nil || lda.EMDone(m, f.Fit.config()) {
		return nil, err
	}
	src, err := u.open(f.Read)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	st, err := lda.EMPassStats(ctx, src, m, f.Fit.config())
	if err != nil {
		return nil, fmt.Errorf("%v: %w", u, err)
	}
	st.Header.Inputs = []statsfile.Input{u.Input}
	return encode(ctx, st)
}

// emStepFn ends an EM pass: the M-step of the model with the pass's merged
// statistics (a side input) and the stopping rule; a model whose passes
// have ended passes through.
type emStepFn struct {
	Fit Settings `json:"fit"`
}

// ProcessElement returns the encoded model after the pass.
func (f *emStepFn) ProcessElement(_ context.Context, model, merged []byte) ([]byte, error) {
	m, err := models.Parse(model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	cfg := f.Fit.config()
	if lda.EMDone(m, cfg) {
		return model, nil
	}
	acc, err := decodeAcc(merged)
	if err != nil {
		return nil, err
	}
	if acc.em == nil {
		return nil, fmt.Errorf("an EM pass without statistics (no documents?)")
	}
	if err := lda.EMStep(m, acc.em, cfg); err != nil {
		return nil, err
	}
	return modelBytes(m)
}

// writeModelFn writes the end of a pipeline with EM passes: the model (the
// main input) and, with Output.Stats, the merged phase-2 statistics (a
// side input), as writeFn does.
type writeModelFn struct {
	Out Output `json:"out"`
}

// ProcessElement writes the outputs.
func (f *writeModelFn) ProcessElement(ctx context.Context, model, p2 []byte) error {
	m, err := models.Parse(model)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return withOutputs(ctx, f.Out, func(out Output) error {
		return out.outputs(func() error {
			st, err := decode(p2)
			if err != nil {
				return err
			}
			st.Header.Inputs = coalesce(st.Header.Inputs)
			return implicit.WriteTopicStats(ctx, out.Stats, st)
		}, func() error {
			if out.NoTiming {
				m.Fit.Seconds = 0
			}
			return m.Write(out.Model)
		})
	})
}
