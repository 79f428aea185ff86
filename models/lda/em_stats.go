package lda

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// The EM passes as a statistics route, one pass at a time, for shards
// computed apart (streamfit stats --phase em, a Beam pipeline): the model
// before a pass (the spectral fit, or the model EMStep returned after the
// pass before) gives EMPassStats over every shard; the shards' statistics
// merge exactly (implicit.EMAcc.Merge, in any order); EMStep applies the
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
// (the spectral fit or a model between passes), as Fit's pass does.
func EMPassStats(ctx context.Context, src stream.DocSource, m *models.Model, cfg Config) (*implicit.EMAcc, error) {
	if EMDone(m, cfg) {
		return nil, ErrEMDone
	}
	if d := src.Info().Terms; d != m.D {
		return nil, fmt.Errorf("lda: the model has %d words, the documents %d", m.D, d)
	}
	st, err := emStateOf(m, cfg.EM.withDefaults())
	if err != nil {
		return nil, err
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	acc := implicit.NewEMAcc(m.D, m.K)
	if err := acc.Pass(ctx, src.Docs, workers, &st.params, nil); err != nil {
		return nil, err
	}
	return acc, nil
}

// EMStep ends an EM pass on m: from acc, the pass's statistics over all
// the documents (merged), it records the pass's bound, applies the
// stopping rule and the M-step, and stores the next parameters in m
// (sorted, and final, when EMDone then holds).
func EMStep(m *models.Model, acc *implicit.EMAcc, cfg Config) error {
	if EMDone(m, cfg) {
		return ErrEMDone
	}
	if acc.D != m.D || acc.K != m.K {
		return fmt.Errorf("lda: EM statistics of d=%d, k=%d for a model of d=%d, k=%d", acc.D, acc.K, m.D, m.K)
	}
	em := cfg.EM.withDefaults()
	st, err := emStateOf(m, em)
	if err != nil {
		return err
	}
	if _, err := st.step(acc, em); err != nil {
		return err
	}
	m.Fit.Passes++
	final := st.done || len(st.bounds) >= cfg.EM.Passes
	st.store(m, em, final)
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
		return startState(m, em), nil
	}
	k, d := m.K, m.D
	p := implicit.TopicParams{K: k, D: d, Alpha: append([]float64(nil), m.Alpha...), Beta: make([]float64, k*d), Single: m.Model == "topic", Tol: em.EStepTol, Prune: em.EStepPrune}
	for j, row := range m.Topics {
		for w, v := range row {
			p.Beta[w*k+j] = v
		}
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("lda: the model between EM passes: %w", err)
	}
	return &emState{params: p, bounds: append([]float64(nil), m.Fit.EM.Bounds...), done: m.Fit.EM.Converged}, nil
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
