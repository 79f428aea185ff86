package lda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// FitKStats is FitK from the merged phase-2 statistics st of its largest k
// (Phase1Stats, PowerStats, Phase2Stats with Config.K the largest of ks):
// those statistics hold every smaller k's, the blocks FitK takes from its
// third-moment pass (sweepBlocks), so no pass over the documents is needed
// for the spectral fits. The largest of ks must be st's k; fields of cfg
// that the statistics fix are taken from them (ConfigFromStats; cfg.K is
// ignored).
//
// src, when not nil, is the documents st was computed over: the EM passes
// of cfg.EM then run over it, shared by the k as FitK's are, and the
// models are scored on opt.HeldOut (which must be given unless
// opt.NoScore: the statistics hold every document of src, so none can be
// held out) and by their coherence over src. With nil src no EM pass runs
// and opt.NoScore must be set: the models are the spectral fits, solved as
// when cfg.EM's passes follow (the start of EM passes run elsewhere, per
// model: EMStats) unless cfg.EM.Passes is 0 (the pure spectral fits).
//
// The statistics hold the largest k's passes only, so every smaller k
// starts from their blocks, as FitK's with opt.SharedStart (the default of
// FitK whitens a large vocabulary for each k by passes of its own:
// FitKStatsEach takes each k's statistics of its own). Statistics of src
// cut as FitStats says give the models of FitK over src with opt.HeldOut
// and SharedStart bit for bit, whatever cfg.Workers and however the
// shards were merged. A smaller k whose block the data refuse is an error
// (FitK takes passes of its own for it; from statistics, fit that k from
// statistics of its own).
func FitKStats(ctx context.Context, st *implicit.TopicStats, src stream.DocSource, ks []int, cfg Config, opt SweepOptions) (*Sweep, error) {
	start := time.Now()
	ks, err := sweepKs(ks)
	if err != nil {
		return nil, err
	}
	h := st.Header
	switch {
	case h.Phase != 2 || st.Triple == nil:
		return nil, fmt.Errorf("lda: fitting needs merged phase-2 statistics, got phase %d (run the phase-2 pass with this file as its basis first)", h.Phase)
	case ks[len(ks)-1] != h.K:
		return nil, fmt.Errorf("lda: the statistics are of k=%d, which must be the largest k of the sweep (its smaller k are blocks of them), not k=%d", h.K, ks[len(ks)-1])
	}
	if err := checkSweepSource(st, src, opt); err != nil {
		return nil, err
	}
	cfg.K, cfg.Third = 0, Explicit
	top, b, err := phase2Basis(st, cfg)
	if err != nil {
		return nil, err
	}
	sweep := &sweepSpectral{ks: ks[:len(ks)-1], models: map[int]*models.Model{}}
	track := newTracker(top)
	track.passes = st.Passes + 1
	var m *models.Model
	err = stage(ctx, "solve", func(ctx context.Context) (err error) {
		m, err = sweep.solve(ctx, &third{acc: st.Triple}, b, top)
		return err
	})
	var neg *negativeError
	if errors.As(err, &neg) && !h.Exact && st.Passes == 1 && top.PowerIters >= 0 {
		neg.advice = "W from the first sketch holds negative directions of the second moment, which the power pass over the sketch's range separates, as fit does: compute the power statistics with the phase-1 statistics as the basis, then phase 2 with those as the basis"
	}
	if err != nil {
		return nil, err
	}
	ms, shared := make([]*models.Model, len(ks)), make([]bool, len(ks))
	for i, k := range ks[:len(ks)-1] {
		if ms[i] = sweep.models[k]; ms[i] == nil {
			return nil, fmt.Errorf("lda: k=%d: the data refuse its block of the statistics of k=%d; fit it from statistics of its own", k, top.K)
		}
		shared[i] = true
	}
	ms[len(ks)-1], shared[len(ks)-1] = m, true
	r := sweepRun{ks: ks, models: ms, shared: shared, train: src, held: opt.HeldOut, where: "source",
		vocab: st.Vocab, track: track, start: start}
	cfg.Single = top.Single
	return finishSweep(ctx, r, cfg, opt)
}

// FitKStatsEach is FitK from statistics of every k's own: sts[i] the merged
// phase-2 statistics of the fit of ks[i] topics (Phase1Stats, PowerStats
// where the fit takes a power pass, Phase2Stats, with Config.K = ks[i] and
// the same seed and vocabulary). Each k's spectral fit is FitStats's, the
// start FitK's default takes for it with a whitening of its own, and the
// EM passes over src and the scores are FitKStats's. Statistics of src cut
// as FitStats says give the models and scores of FitK over src with
// opt.HeldOut bit for bit (without opt.SharedStart), whatever cfg.Workers.
func FitKStatsEach(ctx context.Context, sts []*implicit.TopicStats, src stream.DocSource, ks []int, cfg Config, opt SweepOptions) (*Sweep, error) {
	start := time.Now()
	if len(sts) != len(ks) {
		return nil, fmt.Errorf("lda: %d statistics for %d k", len(sts), len(ks))
	}
	byK := map[int]*implicit.TopicStats{}
	for i, k := range ks {
		if h := sts[i].Header; h.K != k {
			return nil, fmt.Errorf("lda: the statistics given for k=%d are of k=%d", k, h.K)
		}
		byK[k] = sts[i]
	}
	ks, err := sweepKs(ks)
	if err != nil {
		return nil, err
	}
	first := byK[ks[0]]
	if err := checkSweepSource(first, src, opt); err != nil {
		return nil, err
	}
	ms, shared := make([]*models.Model, len(ks)), make([]bool, len(ks))
	passes := 0
	for i, k := range ks {
		st := byK[k]
		h := st.Header
		if h.D != first.Header.D || h.Model != first.Header.Model || !slices.Equal(st.Vocab, first.Vocab) {
			return nil, fmt.Errorf("lda: the statistics of k=%d are of another vocabulary or model than those of k=%d", k, ks[0])
		}
		c := cfg
		c.K, c.Third = 0, Explicit
		if ms[i], err = FitStats(ctx, st, c); err != nil {
			return nil, fmt.Errorf("lda: k=%d: %w", k, err)
		}
		ms[i].Fit.Plan = nil // as FitK's own starts, which report no plan per model
		passes += st.Passes + 1
		shared[i] = i == len(ks)-1
	}
	top := cfg
	top.K = ks[len(ks)-1]
	top = ConfigFromStats(top, byK[top.K].Header)
	track := newTracker(top)
	track.passes = passes
	r := sweepRun{ks: ks, models: ms, shared: shared, train: src, held: opt.HeldOut, where: "source",
		vocab: first.Vocab, track: track, start: start}
	cfg.Single = top.Single
	return finishSweep(ctx, r, cfg, opt)
}

// checkSweepSource refuses documents src (when given) that are not those
// the statistics st were computed over, and scores without held-out
// documents.
func checkSweepSource(st *implicit.TopicStats, src stream.DocSource, opt SweepOptions) error {
	h := st.Header
	if !opt.NoScore && (src == nil || opt.HeldOut == nil) {
		return errors.New("lda: scoring a sweep from statistics needs the documents and the held-out documents: the statistics hold every document, so none can be held out")
	}
	if src == nil {
		return nil
	}
	info := src.Info()
	if info.Terms != h.D {
		return fmt.Errorf("lda: the statistics have %d words, the documents %d", h.D, info.Terms)
	}
	if info.Vocab != nil && st.Vocab != nil && !slices.Equal(info.Vocab, st.Vocab) {
		return errors.New("lda: the documents' vocabulary differs from the statistics'")
	}
	return nil
}
