package beamfit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/streamfit/streamfit/implicit/statsfile"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// The EM passes of the default LDA (and single-topic) fit, after the
// spectral fit of the merged phase-2 statistics, and the likelihood passes
// of a dense model's fit (models.Refinement: GMM's EM, the HMM's
// Baum–Welch), after its moment fit: up to a cap of stages (Settings.emCap),
// each the statistics of every work unit for the current model (a side
// input), merged exactly, and the M-step with the stopping rule giving the
// next model. A Beam pipeline is static, so the pipeline holds a stage for
// every pass the cap allows; once the stopping rule has fired, the stages
// after it read nothing and pass the model through, so the model is the
// one-process fit's, which stops there. For a dense model, "the model"
// between the stages is the refinement's state.

// emPasses adds the EM stages after the merged statistics last (phase 2 of
// a topic model, a dense model's last moment pass) and returns the final
// model, encoded (modelBytes, or a refinement's state).
func emPasses(s beam.Scope, units, last beam.PCollection, o Options) beam.PCollection {
	start := &emStartFn{Read: o.Read, Fit: o.Fit}
	if o.Fit.dense() {
		start.Units = o.Units // for a start that samples the rows
	}
	model := beam.ParDo(s.Scope("em start"), start, last)
	for i := range o.Fit.emCap() {
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

// emStartFn fits the model the EM passes start from: the spectral fit of
// the merged phase-2 statistics, as `streamfit fit --from-stats` does, or a
// dense model's refinement's start from its merged moment statistics,
// which may sample the rows of Units (read in order on this worker).
type emStartFn struct {
	Read  stream.Options `json:"read"`
	Fit   Settings       `json:"fit"`
	Units []Unit         `json:"units,omitempty"`
}

// ProcessElement returns the encoded start of the merged statistics
// merged.
func (f *emStartFn) ProcessElement(ctx context.Context, merged []byte) ([]byte, error) {
	switch {
	case f.Fit.dense():
		return f.denseStart(ctx, merged)
	case f.Fit.sweep():
		return sweepStart(ctx, merged, f.Fit)
	}
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

// denseStart returns the state of the dense model's refinement before its
// first pass.
func (f *emStartFn) denseStart(ctx context.Context, merged []byte) ([]byte, error) {
	r, err := f.Fit.refinement()
	if err != nil {
		return nil, err
	}
	if len(merged) == 0 {
		return nil, fmt.Errorf("%s: no statistics to fit (no rows?)", f.Fit.Model)
	}
	st, err := implicit.DecodeDenseStats(merged)
	if err != nil {
		return nil, err
	}
	return r.Start(ctx, st, unitRows{units: f.Units, read: f.Read, cols: st.Header.D})
}

// unitRows are the rows of the files of units, all of them in order, as
// one source (the union a one-process fit reads).
type unitRows struct {
	units []Unit
	read  stream.Options
	cols  int
}

// Info reports the rows' width and the first file.
func (r unitRows) Info() stream.Info {
	in := stream.Info{Cols: r.cols}
	if len(r.units) > 0 {
		in.Path = r.units[0].Input.Path
	}
	return in
}

// Rows reads the files in turn, each whole and once.
func (r unitRows) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		for i, u := range r.units {
			if i > 0 && r.units[i-1].Input.Path == u.Input.Path {
				continue // the next piece of a file read whole
			}
			u.pin()
			src, _, err := shard.OpenDense(shard.Part{Path: u.Input.Path}, r.read)
			if err != nil {
				yield(nil, err)
				return
			}
			more := true
			for b, err := range src.Rows(ctx) {
				if more = yield(b, err) && err == nil; !more {
					break
				}
			}
			stream.Close(src)
			if !more {
				return
			}
		}
	}
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
	sweep sweepCache
}

// ProcessElement returns the encoded EM statistics of u.
func (f *emUnitFn) ProcessElement(ctx context.Context, u Unit, model []byte) ([]byte, error) {
	switch {
	case f.Fit.dense():
		return denseEMStats(ctx, u, f.Read, model, f.Fit)
	case f.Fit.sweep():
		ms, err := f.sweep.get(model)
		if err != nil {
			return nil, err
		}
		return sweepUnitStats(ctx, u, f.Read, ms, f.Fit)
	}
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

// denseEMStats computes the encoded statistics of the dense model's
// refinement pass after state over the rows of u (the sequences or sets
// that begin in it, for the models that read groups in order); none once
// the passes have ended.
func denseEMStats(ctx context.Context, u Unit, o stream.Options, state []byte, s Settings) ([]byte, error) {
	r, err := s.refinement()
	if err != nil {
		return nil, err
	}
	if next, err := r.Pass(state, u.Input.Path); err != nil || next == nil {
		return nil, err
	}
	w := shard.Dense{Grouped: r.Moments().Group != "", Plan: func(path string) implicit.Planner {
		return passPlanner(func() (*implicit.Pass, error) { return r.Pass(state, path) })
	}}
	return workflowUnitStats(ctx, u, o, w, nil)
}

// passPlanner is a planner of one pass, the one it returns: a
// refinement's pass, run by the shard workflow over a work unit.
type passPlanner func() (*implicit.Pass, error)

func (p passPlanner) First(int) (*implicit.Pass, error) { return p() }

func (passPlanner) Next(context.Context, *implicit.DenseStats) (*implicit.Pass, error) {
	return nil, nil
}

func (passPlanner) Like(context.Context, *implicit.DenseStats) (*implicit.Pass, error) {
	return nil, implicit.ErrNoAppend
}

// emStepFn ends an EM pass: the M-step of the model with the pass's merged
// statistics (a side input) and the stopping rule; a model whose passes
// have ended passes through.
type emStepFn struct {
	Fit Settings `json:"fit"`
}

// ProcessElement returns the encoded model after the pass.
func (f *emStepFn) ProcessElement(_ context.Context, model, merged []byte) ([]byte, error) {
	switch {
	case f.Fit.dense():
		return denseEMStep(model, merged, f.Fit)
	case f.Fit.sweep():
		return sweepStep(model, merged, f.Fit)
	}
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

// denseEMStep is the M step of the dense model's refinement after the
// pass from state with the merged statistics merged; the state passes
// through once the passes have ended.
func denseEMStep(state, merged []byte, s Settings) ([]byte, error) {
	r, err := s.refinement()
	if err != nil {
		return nil, err
	}
	if next, err := r.Pass(state, ""); err != nil || next == nil {
		return state, err
	}
	acc, err := decodeAcc(merged)
	if err != nil {
		return nil, err
	}
	if acc.dense == nil {
		return nil, fmt.Errorf("%s: a pass without statistics (no rows?)", s.Model)
	}
	return r.Step(state, acc.dense)
}

// writeModelFn writes the end of a pipeline with EM passes: the model (the
// main input: a dense model's refinement's state, a sweep's models) and,
// with Output.Stats, the merged statistics the passes started from (a side
// input), as writeFn does. A sweep scored on held-out documents reads the
// documents of Units with Read for the coherence of its topics.
type writeModelFn struct {
	Out   Output         `json:"out"`
	Read  stream.Options `json:"read"`
	Units []Unit         `json:"units,omitempty"`
}

// ProcessElement writes the outputs.
func (f *writeModelFn) ProcessElement(ctx context.Context, model, last []byte) error {
	switch {
	case f.Out.Fit.dense():
		return f.writeDense(ctx, model, last)
	case f.Out.Fit.sweep():
		return f.writeSweep(ctx, model, last)
	}
	m, err := models.Parse(model)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return withOutputs(ctx, f.Out, func(out Output) error {
		return out.outputs(func() error { return writeStats(ctx, out.Stats, last) }, func() error {
			if out.NoTiming {
				m.Fit.Seconds = 0
			}
			return m.Write(out.Model)
		})
	})
}

// writeDense writes the model of the dense model's refinement's final
// state and the merged statistics of its moment fit's last pass.
func (f *writeModelFn) writeDense(ctx context.Context, state, last []byte) error {
	r, err := f.Out.Fit.refinement()
	if err != nil {
		return err
	}
	st, err := implicit.DecodeDenseStats(last)
	if err != nil {
		return err
	}
	return withOutputs(ctx, f.Out, func(out Output) error {
		return out.writeDense(ctx, st, func() (models.Fitted, error) { return r.Model(state) })
	})
}

// writeStats writes the merged statistics last of a topic model to path,
// each file listed once (coalesce).
func writeStats(ctx context.Context, path string, last []byte) error {
	st, err := decode(last)
	if err != nil {
		return err
	}
	st.Header.Inputs = coalesce(st.Header.Inputs)
	return implicit.WriteTopicStats(ctx, path, st)
}
