package beamfit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/report"
	"github.com/streamfit/streamfit/stream"
)

// A sweep over k (Settings.Ks, lda and topic) runs as the stages of the
// library's sweep (lda.SweepConfig, FitKStats, SweepEMPassStats,
// SweepEMStep, SweepFromStages): the spectral passes of the sweep's Config
// as for one k; the EM start is the spectral fit of every k from the
// merged phase-2 statistics (lda.FitKStats with no documents); each EM
// stage's read of a work unit serves every model still refining, the
// statistics of all of them merged exactly in one combine; the model
// between the stages is the list of the sweep's models; and the last step
// writes a model file per k (lda.SweepOut) and, with held-out documents,
// the scores and the recommended k.

// kValue is the topic models' --k: one number, or the list or range of a
// sweep (lda.ParseKs), K the largest.
type kValue struct{ s *Settings }

func (v kValue) String() string {
	if v.s == nil {
		return ""
	}
	if len(v.s.Ks) > 1 {
		return lda.FormatKs(v.s.Ks)
	}
	return strconv.Itoa(v.s.K)
}

func (v kValue) Set(s string) error {
	ks, err := lda.ParseKs(s)
	if err != nil {
		return err
	}
	v.s.K, v.s.Ks = ks[len(ks)-1], nil
	if len(ks) > 1 {
		v.s.Ks = ks
	}
	return nil
}

// sweep reports whether the settings fit several k (Ks).
func (s Settings) sweep() bool { return len(s.Ks) > 1 }

// sweepErr reports why Ks is no sweep the pipeline runs.
func (s Settings) sweepErr() error {
	switch {
	case s.dense():
		return fmt.Errorf("k=%v: a list of k is for the topic models (lda, topic)", s.Ks)
	case s.Ks[len(s.Ks)-1] != s.K:
		return fmt.Errorf("k=%d, ks=%v: K must be the largest of Ks", s.K, s.Ks)
	}
	for i := 1; i < len(s.Ks); i++ {
		if s.Ks[i] <= s.Ks[i-1] {
			return fmt.Errorf("ks=%v: want distinct k in ascending order", s.Ks)
		}
	}
	_, err := lda.SweepConfig(lda.Config{}, s.Ks)
	return err
}

// sweepBytes encodes the models of a sweep between the stages (a JSON
// array of model files; parseSweep reads them back exactly).
func sweepBytes(ms []*models.Model) ([]byte, error) { return json.Marshal(ms) }

// parseSweep reads the models encoded by sweepBytes.
func parseSweep(b []byte) ([]*models.Model, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("the sweep's models: %w", err)
	}
	ms := make([]*models.Model, len(raw))
	for i, r := range raw {
		m, err := models.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("the sweep's model %d: %w", i+1, err)
		}
		ms[i] = m
	}
	return ms, nil
}

// sweepCache keeps the models parsed from the last side input, the same
// for every element of a stage.
type sweepCache struct {
	raw []byte
	ms  []*models.Model
}

// get returns the models encoded in b.
func (c *sweepCache) get(b []byte) ([]*models.Model, error) {
	if c.ms != nil && bytes.Equal(c.raw, b) {
		return c.ms, nil
	}
	ms, err := parseSweep(b)
	if err != nil {
		return nil, err
	}
	c.raw, c.ms = b, ms
	return ms, nil
}

// sweepStart fits the spectral model of every k of s.Ks from the merged
// phase-2 statistics, as `streamfit fit --from-stats S --k LIST` does
// before its EM passes.
func sweepStart(ctx context.Context, merged []byte, s Settings) ([]byte, error) {
	st, err := decode(merged)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("no statistics to fit (no documents?)")
	}
	st.Exact = nil
	sw, err := lda.FitKStats(ctx, st, nil, s.Ks, s.config(), lda.SweepOptions{NoScore: true})
	if err != nil {
		return nil, err
	}
	return sweepBytes(sw.Models)
}

// sweepUnitStats computes the statistics of the EM pass of every model of
// the sweep still refining over u, in one read of its documents; none once
// every model's passes have ended.
func sweepUnitStats(ctx context.Context, u Unit, o stream.Options, ms []*models.Model, s Settings) ([]byte, error) {
	cfg := s.config()
	if lda.SweepEMDone(ms, cfg) {
		return nil, nil
	}
	src, err := u.open(o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	st, err := lda.SweepEMPassStats(ctx, src, ms, cfg)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", u, err)
	}
	for _, one := range st.Stats {
		if one != nil {
			one.Header.Inputs = []statsfile.Input{u.Input}
		}
	}
	return encode(ctx, st)
}

// sweepStep ends an EM pass of the sweep: each model still refining takes
// its M-step and stopping rule with its merged statistics; once every
// model has ended, the models pass through.
func sweepStep(model, merged []byte, s Settings) ([]byte, error) {
	ms, err := parseSweep(model)
	if err != nil {
		return nil, err
	}
	cfg := s.config()
	if lda.SweepEMDone(ms, cfg) {
		return model, nil
	}
	acc, err := decodeAcc(merged)
	if err != nil {
		return nil, err
	}
	if acc.sweep == nil {
		return nil, errors.New("an EM pass of the sweep without statistics (no documents?)")
	}
	if err := lda.SweepEMStep(ms, acc.sweep, cfg); err != nil {
		return nil, err
	}
	return sweepBytes(ms)
}

// writeSweep writes the end of a sweep: the merged phase-2 statistics
// (Output.Stats), the model file of every k (lda.SweepOut of Output.Model)
// and, with Output.HeldOut, the scores file (Output.Scores: the JSON of
// `streamfit fit --k LIST --json`), scored by lda.SweepFromStages: held-out
// perplexity over the held-out documents, and coherence over the
// documents of every work unit, read in order on this worker. Outputs
// written before one that fails are removed.
func (f *writeModelFn) writeSweep(ctx context.Context, model, last []byte) (err error) {
	ms, err := parseSweep(model)
	if err != nil {
		return err
	}
	out := f.Out
	opt := lda.SweepOptions{NoScore: out.HeldOut == ""}
	var train stream.DocSource
	if !opt.NoScore {
		held, err := stream.Open(out.HeldOut, f.Read)
		if err != nil {
			return fmt.Errorf("%s: %w", out.HeldOut, err)
		}
		defer stream.Close(held)
		opt.HeldOut = held
		train = unitDocs{units: f.Units, read: f.Read, info: stream.Info{Format: "units", Terms: ms[0].D, Vocab: ms[0].Vocab, Rows: -1, NNZ: -1}}
	}
	sw, err := lda.SweepFromStages(ctx, ms, train, out.Fit.config(), opt)
	if err != nil {
		return err
	}
	var written []string
	defer func() {
		if err != nil {
			for _, p := range written {
				err = errors.Join(err, removeOutput(ctx, p))
			}
		}
	}()
	if out.Stats != "" {
		if err := withOutputs(ctx, Output{Stats: out.Stats}, func(o Output) error { return writeStats(ctx, o.Stats, last) }); err != nil {
			return err
		}
		written = append(written, out.Stats)
	}
	files := make([]string, len(ms))
	for i, m := range ms {
		files[i] = lda.SweepOut(out.Model, m.K)
		if out.NoTiming {
			m.ClearTiming()
		}
		if err := withOutputs(ctx, Output{Model: files[i]}, func(o Output) error { return m.Write(o.Model) }); err != nil {
			return err
		}
		written = append(written, files[i])
	}
	if opt.NoScore {
		return nil
	}
	if out.NoTiming {
		sw.Seconds = 0
	}
	b, err := json.MarshalIndent(report.SweepFile{Sweep: *sw, Files: files}, "", "  ")
	if err != nil {
		return err
	}
	return withOutputs(ctx, Output{Model: out.Scores}, func(o Output) error {
		return stream.WriteFileAtomic(o.Model, append(b, '\n'))
	})
}

// unitDocs are the documents of units, all of them in order, as one
// source (the union a one-process fit reads).
type unitDocs struct {
	units []Unit
	read  stream.Options
	info  stream.Info
}

func (u unitDocs) Info() stream.Info { return u.info }

// Docs reads the units in turn.
func (u unitDocs) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		for _, unit := range u.units {
			src, err := unit.open(u.read)
			if err != nil {
				yield(nil, err)
				return
			}
			more := true
			for b, err := range src.Docs(ctx) {
				if err != nil {
					err = fmt.Errorf("%v: %w", unit, err)
				}
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
