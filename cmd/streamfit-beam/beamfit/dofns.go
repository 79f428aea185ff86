package beamfit

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(Unit{}), encodeUnit, decodeUnit)
	beam.RegisterCoder(reflect.TypeOf(statsAcc{}), encodeAcc, decodeAcc)
	register.DoFn2x2[context.Context, Unit, []byte, error](&phase1Fn{})
	register.DoFn3x2[context.Context, Unit, []byte, []byte, error](&basedFn{})
	register.DoFn2x2[context.Context, []byte, []byte, error](&templateFn{})
	register.DoFn3x2[context.Context, []byte, []byte, []byte, error](&chooseFn{})
	register.DoFn2x1[context.Context, []byte, error](&writeFn{})
	register.Combiner3[statsAcc, []byte, []byte](&mergeFn{})
	register.DoFn2x2[context.Context, []byte, []byte, error](&emStartFn{})
	register.DoFn3x2[context.Context, Unit, []byte, []byte, error](&emUnitFn{})
	register.DoFn3x2[context.Context, []byte, []byte, []byte, error](&emStepFn{})
	register.DoFn3x1[context.Context, []byte, []byte, error](&writeModelFn{})
}

// phase1Fn computes the phase-1 statistics of a work unit.
type phase1Fn struct {
	Read stream.Options `json:"read"`
	Fit  Settings       `json:"fit"`
}

// ProcessElement returns the encoded phase-1 statistics of u.
func (f *phase1Fn) ProcessElement(ctx context.Context, u Unit) ([]byte, error) {
	if f.Fit.dense() {
		return denseUnitStats(ctx, u, f.Read, nil, f.Fit)
	}
	st, err := unitStats(ctx, u, f.Read, passPhase1, nil, f.Fit.config())
	if err != nil {
		return nil, err
	}
	return encode(ctx, st)
}

// basedFn computes the statistics of a power pass or of phase 2 of a work
// unit against the template of the pass (a side input, see templateFn); an
// empty template (a power pass not taken, a dense model's pass after its
// last) gives empty statistics. For a dense model, the template is the
// merged statistics of the pass before.
type basedFn struct {
	Pass string         `json:"pass"`
	Read stream.Options `json:"read"`
	Fit  Settings       `json:"fit"`

	basis basisCache
}

// ProcessElement returns the encoded statistics of u.
func (f *basedFn) ProcessElement(ctx context.Context, u Unit, template []byte) ([]byte, error) {
	basis, err := f.basis.get(template)
	switch {
	case err != nil || basis.empty():
		return nil, err
	case f.Fit.dense():
		return denseUnitStats(ctx, u, f.Read, basis.dense, f.Fit)
	}
	st, err := unitStats(ctx, u, f.Read, f.Pass, basis.st, f.Fit.config())
	if err != nil {
		return nil, err
	}
	return encode(ctx, st)
}

// templateFn turns merged statistics into the template of the next pass
// (powerTemplate or phase2Template; denseTemplate for a dense model), once
// for all work units.
type templateFn struct {
	Pass string   `json:"pass"`
	Fit  Settings `json:"fit"`
}

// ProcessElement returns the encoded template after the merged statistics
// merged (empty: the power pass is not taken).
func (f *templateFn) ProcessElement(ctx context.Context, merged []byte) ([]byte, error) {
	if f.Fit.dense() {
		return denseTemplate(ctx, merged, f.Fit)
	}
	basis, err := decode(merged)
	if err != nil {
		return nil, err
	}
	if basis == nil {
		return nil, fmt.Errorf("pass %s: no statistics to start from (no documents?)", f.Pass)
	}
	cfg := f.Fit.config()
	var t *implicit.TopicStats
	if f.Pass == passPower {
		t, err = powerTemplate(ctx, basis, cfg)
	} else {
		t, err = phase2Template(ctx, basis, cfg)
	}
	if err != nil {
		return nil, err
	}
	return encode(ctx, t)
}

// chooseFn picks the basis after a power stage: the merged power
// statistics (a side input) when the pass was taken, else the statistics
// before it.
type chooseFn struct{}

// ProcessElement returns power unless it is empty, else before.
func (*chooseFn) ProcessElement(_ context.Context, before, power []byte) ([]byte, error) {
	if len(power) > 0 {
		return power, nil
	}
	return before, nil
}

// writeFn writes the end of the pipeline: the model fitted from the merged
// phase-2 statistics, and/or the merged statistics themselves (Output).
type writeFn struct {
	Out Output `json:"out"`
}

// ProcessElement writes the outputs of the merged statistics merged.
func (f *writeFn) ProcessElement(ctx context.Context, merged []byte) error {
	st, err := decodeAcc(merged)
	switch {
	case err != nil:
		return err
	case st.empty():
		return fmt.Errorf("no statistics to write (no documents?)")
	}
	return withOutputs(ctx, f.Out, func(out Output) error {
		if st.dense != nil {
			return out.writeDense(ctx, st.dense, nil)
		}
		return out.write(ctx, st.st)
	})
}
