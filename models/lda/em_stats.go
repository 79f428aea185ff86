package lda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// The EM passes as a statistics route, one pass at a time, for shards
// computed apart (streamfit stats --phase em, a Beam pipeline): the model
// before a pass (the spectral fit, or the model EMStep returned after the
// pass before) gives EMPassStats over every shard; the shards' statistics
// merge exactly (EMAcc.Merge, in any order); EMStep applies the
// stopping rule and the M-step to the model. EMDone says when the passes
// end. From the spectral model of Fit's statistics, the passes give Fit's
// model bit for bit.
//
// A model between passes keeps its topics in the order EM holds them (the
// spectral fit's), so that the next pass starts from exactly the
// parameters one process would hold; the model of the last pass has them
// in order of decreasing weight, as Fit's.

// ErrEMDone reports an EM pass asked for a model whose passes have ended
// (the stopping rule fired, or the pass cap was reached).
var ErrEMDone = errors.New("the model's EM passes have ended (converged, or the pass cap reached)")

// EMDone reports whether m needs no more EM passes of cfg.EM: none are
// configured, the stopping rule fired, or the pass cap was reached.
func EMDone(m *models.Model, cfg Config) bool {
	if cfg.EM.Passes <= 0 {
		return true
	}
	e := m.Fit.EM
	return e != nil && (e.Converged || e.Passes >= cfg.EM.Passes)
}

// EMPassStats computes the statistics of the next EM pass over src for m
// (the spectral fit or a model between passes), as Fit's pass does, with
// the header that names the pass and the model (EMHeader).
func EMPassStats(ctx context.Context, src stream.DocSource, m *models.Model, cfg Config) (*EMStats, error) {
	h, st, err := emPassStart(src.Info(), m, cfg)
	if err != nil {
		return nil, err
	}
	acc := NewEMAcc(m.D, m.K)
	if err := acc.Pass(ctx, src.Docs, emWorkers(cfg), &st.params, nil); err != nil {
		return nil, err
	}
	return &EMStats{Header: h, Acc: acc}, nil
}

// emPassStart checks that documents described by info can serve m's next
// EM pass and returns the header of its statistics (one shard) and the EM
// state the pass starts from.
func emPassStart(info stream.Info, m *models.Model, cfg Config) (statsfile.Header, *emState, error) {
	h, err := EMHeader(m, cfg)
	if err != nil {
		return h, nil, err
	}
	if info.Terms != m.D {
		return h, nil, fmt.Errorf("lda: the model has %d words, the documents %d", m.D, info.Terms)
	}
	if m.Vocab != nil && info.Vocab != nil && !slices.Equal(m.Vocab, info.Vocab) {
		return h, nil, errors.New("lda: the documents' vocabulary differs from the model's")
	}
	st, err := emStateOf(m, cfg.EM.withDefaults())
	h.Shards = 1
	return h, st, err
}

// emWorkers is the goroutines of an EM pass of the statistics route.
func emWorkers(cfg Config) int {
	if cfg.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return cfg.Workers
}

// EMHeader is the header of the statistics of m's next EM pass with
// cfg.EM: the pass (Phase, from 1), the model's fingerprint (Basis,
// EMFingerprint), its shape and vocabulary, and the settings (Params).
// It reports ErrEMDone when m needs no more passes.
func EMHeader(m *models.Model, cfg Config) (statsfile.Header, error) {
	if EMDone(m, cfg) {
		return statsfile.Header{}, ErrEMDone
	}
	if cfg.EM.Online {
		return statsfile.Header{}, errors.New("lda: the EM passes' statistics route runs batch EM; online EM runs in one process (Fit, RefineEM)")
	}
	em := cfg.EM.withDefaults()
	params, err := json.Marshal(struct {
		Model      string  `json:"model"`
		Tol        float64 `json:"tol"`
		Eta        float64 `json:"eta"`
		FitAlpha   bool    `json:"fit_alpha"`
		EStepTol   float64 `json:"estep_tol"`
		EStepPrune float64 `json:"estep_prune"`
		Overrelax  float64 `json:"estep_overrelax"`
		Relax      float64 `json:"relax"`
	}{m.Model, em.Tol, em.Eta, em.FitAlpha, em.EStepTol, em.EStepPrune, em.EStepOverrelax, em.Relax})
	if err != nil {
		return statsfile.Header{}, err
	}
	pass := 1
	if m.Fit.EM != nil {
		pass = m.Fit.EM.Passes + 1
	}
	var vocab uint64
	if m.Vocab != nil {
		vocab = statsfile.VocabHash(m.D, m.Vocab)
	}
	return statsfile.Header{Model: implicit.EMModel, Phase: pass, D: m.D, K: m.K, Alpha0: m.Alpha0,
		VocabHash: vocab, Basis: EMFingerprint(m), Params: params}, nil
}

// EMStep ends an EM pass on m: from st, the pass's statistics over all the
// documents (merged), it records the pass's bound, applies the stopping
// rule and the M-step, and stores the next parameters in m (sorted, and
// final, when EMDone then holds). Statistics of another model, pass or
// settings are refused.
func EMStep(m *models.Model, st *EMStats, cfg Config) error {
	want, err := EMHeader(m, cfg)
	if err != nil {
		return err
	}
	got := st.Header
	got.Shards, got.Inputs = 0, nil
	if err := want.Compatible(got); err != nil {
		return fmt.Errorf("lda: EM statistics of another model or pass than the model's next: %w", err)
	}
	em := cfg.EM.withDefaults()
	state, err := emStateOf(m, em)
	if err != nil {
		return err
	}
	if _, err := state.step(st.Acc, em, false, false); err != nil {
		return err
	}
	m.Fit.Passes++
	final := state.done || len(state.bounds) >= cfg.EM.Passes
	state.store(m, em, final)
	return nil
}

// emStateOf is the EM state m holds: EM's start from a spectral fit, or
// the parameters of a model between passes exactly as stored.
func emStateOf(m *models.Model, em EM) (*emState, error) {
	if m.K < 1 || m.D < 1 || len(m.Topics) != m.K || len(m.Alpha) != m.K {
		return nil, fmt.Errorf("lda: a model of k=%d, d=%d with %d topics and %d weights", m.K, m.D, len(m.Topics), len(m.Alpha))
	}
	for j, row := range m.Topics {
		if len(row) != m.D {
			return nil, fmt.Errorf("lda: topic %d of the model has %d words, d=%d", j, len(row), m.D)
		}
	}
	if m.Fit.EM == nil || m.Fit.EM.Passes == 0 {
		// The statistics route reads every document in every pass.
		st := startState(m, em)
		st.rate = 1
		return st, nil
	}
	k, d := m.K, m.D
	p := TopicParams{K: k, D: d, Alpha: append([]float64(nil), m.Alpha...), Beta: make([]float64, k*d), Single: m.Model == "topic", Tol: em.EStepTol, Prune: em.EStepPrune, Overrelax: em.EStepOverrelax}
	for j, row := range m.Topics {
		for w, v := range row {
			p.Beta[w*k+j] = v
		}
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("lda: the model between EM passes: %w", err)
	}
	return &emState{params: p, bounds: append([]float64(nil), m.Fit.EM.Bounds...), done: m.Fit.EM.Converged, rate: 1}, nil
}

// EMFingerprint identifies the parameters an EM pass over m uses (the
// topics, weights and passes done), so that statistics of passes over
// different models are not merged.
func EMFingerprint(m *models.Model) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v float64) {
		b := math.Float64bits(v)
		for i := range buf {
			buf[i] = byte(b >> (8 * i))
		}
		h.Write(buf[:])
	}
	put(float64(m.K))
	put(float64(m.D))
	for _, a := range m.Alpha {
		put(a)
	}
	for _, row := range m.Topics {
		for _, v := range row {
			put(v)
		}
	}
	if m.Fit.EM != nil {
		put(float64(m.Fit.EM.Passes))
	}
	return h.Sum64()
}
