package lda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// The sweep over k as stages whose passes run apart (a Beam pipeline's):
// the statistics passes of the sweep's Config (SweepConfig) over the
// shards, merged; the spectral fit of every k from the merged phase-2
// statistics (FitKStats with no documents); then EM passes in which each
// shard's one read of its documents serves every model still refining
// (SweepEMPassStats), merged exactly (SweepEMStats.Merge), each model
// taking its own M-step and stopping rule (SweepEMStep) until every one
// has stopped (SweepEMDone); and the sweep of the refined models, scored
// (SweepFromStages). The models are those of FitKStats over the same
// documents, bit for bit, however the shards are cut and merged.

// ParseKs parses the k of a sweep as the command line gives them: one
// number, a list ("10,20,50") or a range from:to[:step] ("10:100:10"),
// each k ≥ 1 and none twice. The k are returned in ascending order.
func ParseKs(s string) ([]int, error) {
	var ks []int
	if from, rest, ok := strings.Cut(s, ":"); ok {
		to, step, _ := strings.Cut(rest, ":")
		if step == "" {
			step = "1"
		}
		a, e1 := strconv.Atoi(from)
		b, e2 := strconv.Atoi(to)
		c, e3 := strconv.Atoi(step)
		if e1 != nil || e2 != nil || e3 != nil || a < 1 || b < a || c < 1 {
			return nil, errors.New("want a range from:to:step of k ≥ 1, such as 10:100:10")
		}
		for k := a; k <= b; k += c {
			ks = append(ks, k)
		}
	} else {
		for p := range strings.SplitSeq(s, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || k < 1 {
				return nil, errors.New("want a number of topics ≥ 1, a list such as 10,20,50 or a range such as 10:100:10")
			}
			ks = append(ks, k)
		}
	}
	return sweepKs(ks)
}

// FormatKs writes ks as ParseKs reads a list: "10,20,50".
func FormatKs(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, ",")
}

// SweepOut is the model file of k topics of a sweep written to out: out
// with {k} replaced by k, or -k<k> before its extension when it has no
// {k} ("model.json" → "model-k20.json").
func SweepOut(out string, k int) string {
	if strings.Contains(out, "{k}") {
		return strings.ReplaceAll(out, "{k}", strconv.Itoa(k))
	}
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-k%d%s", strings.TrimSuffix(out, ext), k, ext)
}

// SweepConfig returns the Config of the statistics passes (Phase1Stats,
// PowerStats, Phase2Stats) of a sweep over ks, whose merged phase-2
// statistics FitKStats fits every k of ks from: cfg for the sweep's
// largest k. It refuses an empty ks or one listing a k twice.
func SweepConfig(cfg Config, ks []int) (Config, error) {
	ks, err := sweepKs(ks)
	if err != nil {
		return cfg, err
	}
	cfg.K = ks[len(ks)-1]
	return cfg, nil
}

// SweepEMStats are the statistics of one EM pass of a sweep's models over
// a shard, or over merged shards: Stats[i] those of the i-th model
// (EMPassStats's), nil for a model whose passes have ended.
type SweepEMStats struct {
	Stats []*EMStats
}

// SweepEMDone reports whether every model of ms has ended its EM passes
// (EMDone).
func SweepEMDone(ms []*models.Model, cfg Config) bool {
	for _, m := range ms {
		if !EMDone(m, cfg) {
			return false
		}
	}
	return true
}

// SweepEMPassStats computes the statistics of the next EM pass of every
// model of ms still refining over src, reading src once: each batch serves
// the passes of every such model, which run concurrently, each on
// cfg.Workers goroutines, as FitKStats's shared passes do. It reports
// ErrEMDone when every model has ended its passes.
func SweepEMPassStats(ctx context.Context, src stream.DocSource, ms []*models.Model, cfg Config) (*SweepEMStats, error) {
	out := &SweepEMStats{Stats: make([]*EMStats, len(ms))}
	var run []int
	var states []*emState
	for i, m := range ms {
		if EMDone(m, cfg) {
			continue
		}
		h, st, err := emPassStart(src.Info(), m, cfg)
		if err != nil {
			return nil, fmt.Errorf("k=%d: %w", m.K, err)
		}
		out.Stats[i] = &EMStats{Header: h, Acc: NewEMAcc(m.D, m.K)}
		run, states = append(run, i), append(states, st)
	}
	if len(run) == 0 {
		return nil, ErrEMDone
	}
	workers := emWorkers(cfg)
	err := teePass(ctx, src.Docs, len(run), func(ctx context.Context, r int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error {
		return out.Stats[run[r]].Acc.Pass(ctx, batches, workers, &states[r].params, nil)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Merge adds the statistics of o (another shard of the same pass of the
// same models) to s, exactly, model by model (EMStats.Merge).
func (s *SweepEMStats) Merge(o *SweepEMStats) error {
	if len(s.Stats) != len(o.Stats) {
		return fmt.Errorf("EM statistics of a sweep of %d models and of one of %d", len(s.Stats), len(o.Stats))
	}
	for i, a := range s.Stats {
		b := o.Stats[i]
		switch {
		case a == nil && b == nil:
		case a == nil || b == nil:
			return fmt.Errorf("EM statistics of the sweep's model %d in one shard's pass and not in another's", i+1)
		default:
			if err := a.Merge(b); err != nil {
				return fmt.Errorf("k=%d: %w", a.Header.K, err)
			}
		}
	}
	return nil
}

// sweepEMMagic begins the encoding of SweepEMStats.
const sweepEMMagic = "SFSWEEM1"

// Encode writes s to w: a magic, the number of models, and each model's
// statistics (EMStats.Encode, exact totals included) after its length in
// bytes (0: none).
func (s *SweepEMStats) Encode(ctx context.Context, w io.Writer) error {
	b := binary.AppendUvarint([]byte(sweepEMMagic), uint64(len(s.Stats)))
	var one bytes.Buffer
	for _, st := range s.Stats {
		one.Reset()
		if st != nil {
			if err := st.Encode(ctx, &one); err != nil {
				return err
			}
		}
		b = binary.AppendUvarint(b, uint64(one.Len()))
		b = append(b, one.Bytes()...)
	}
	_, err := w.Write(b)
	return err
}

// DecodeSweepEMStats parses statistics encoded by SweepEMStats.Encode;
// data of another kind of statistics is refused with an error that wraps
// statsfile.ErrModel.
func DecodeSweepEMStats(data []byte) (*SweepEMStats, error) {
	rest, ok := bytes.CutPrefix(data, []byte(sweepEMMagic))
	if !ok {
		return nil, fmt.Errorf("%w: not the EM statistics of a sweep over k", statsfile.ErrModel)
	}
	bad := errors.New("lda: the EM statistics of a sweep are cut short")
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)) {
		return nil, bad
	}
	rest = rest[w:]
	s := &SweepEMStats{Stats: make([]*EMStats, n)}
	for i := range s.Stats {
		size, w := binary.Uvarint(rest)
		if w <= 0 || size > uint64(len(rest)-w) {
			return nil, bad
		}
		one := rest[w : w+int(size)]
		rest = rest[w+int(size):]
		if size == 0 {
			continue
		}
		st, err := DecodeEMStats(one)
		if err != nil {
			return nil, fmt.Errorf("lda: the sweep's model %d: %w", i+1, err)
		}
		s.Stats[i] = st
	}
	if len(rest) > 0 {
		return nil, errors.New("lda: bytes after the EM statistics of a sweep")
	}
	return s, nil
}

// SweepEMStep ends an EM pass of the models ms with st, the pass's
// statistics over all the documents (merged): every model still refining
// takes its M-step and stopping rule (EMStep); the others are left as
// they are. Statistics of another pass, model or settings are refused.
func SweepEMStep(ms []*models.Model, st *SweepEMStats, cfg Config) error {
	if len(st.Stats) != len(ms) {
		return fmt.Errorf("lda: EM statistics of %d models for a sweep of %d", len(st.Stats), len(ms))
	}
	for i, m := range ms {
		done := EMDone(m, cfg)
		switch {
		case done && st.Stats[i] != nil:
			return fmt.Errorf("lda: k=%d: EM statistics of a model whose passes have ended", m.K)
		case done:
			continue
		case st.Stats[i] == nil:
			return fmt.Errorf("lda: k=%d: no EM statistics for a model still refining", m.K)
		}
		if err := EMStep(m, st.Stats[i], cfg); err != nil {
			return fmt.Errorf("k=%d: %w", m.K, err)
		}
	}
	return nil
}

// SweepFromStages returns the sweep of the models ms, ascending in k: the
// spectral fits of FitKStats with no documents, after their EM passes as
// SweepEMPassStats and SweepEMStep ran them (all ended, SweepEMDone). It
// records what FitKStats over the documents records (each model's passes
// are the sweep's: the statistics', the solve and the EM passes of the
// model that took the most) and, unless opt.NoScore, scores the models on
// opt.HeldOut and by their coherence over train (the documents of the
// statistics, in order) and recommends a k, as FitKStats does. The models
// then equal FitKStats's, bit for bit, but for their wall time.
func SweepFromStages(ctx context.Context, ms []*models.Model, train stream.DocSource, cfg Config, opt SweepOptions) (*Sweep, error) {
	switch {
	case len(ms) == 0:
		return nil, errors.New("lda: a sweep of no models")
	case !SweepEMDone(ms, cfg):
		return nil, errors.New("lda: a sweep whose EM passes have not ended")
	case !opt.NoScore && (train == nil || opt.HeldOut == nil):
		return nil, errors.New("lda: scoring a sweep needs the documents and the held-out documents")
	}
	r := sweepRun{models: ms, where: "source", vocab: ms[0].Vocab, train: train, held: opt.HeldOut,
		track: newTracker(cfg), start: time.Now()}
	for i, m := range ms {
		if i > 0 && m.K <= ms[i-1].K {
			return nil, fmt.Errorf("lda: the models of a sweep must ascend in k: k=%d after k=%d", m.K, ms[i-1].K)
		}
		r.ks = append(r.ks, m.K)
		r.shared = append(r.shared, true)
		r.refined = append(r.refined, cfg.EM.Passes > 0)
		r.track.passes = max(r.track.passes, m.Fit.Passes)
	}
	cfg.Single = ms[0].Model == "topic"
	return finishSweep(ctx, r, cfg, opt)
}
