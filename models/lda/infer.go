package lda

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// DefaultSmooth is the weight of the uniform distribution mixed into every
// topic before documents are scored or their topics inferred (Params):
// β̃ = (1−ε)·β + ε/d with ε = 0.001. It gives every word a positive
// probability under every topic (spectral topics have exact zeros), and is
// the same for every model compared (streamfit's, or another library's
// topic matrix), so perplexities are comparable.
const DefaultSmooth = 1e-3

// Params returns the E-step parameters of a model given by its topics (k
// rows over d words, each a distribution) and weights: LDA's Dirichlet
// parameters α, or with single the single-topic model's topic weights
// (normalised here). Every topic is mixed with the uniform distribution by
// smooth (DefaultSmooth when 0; negative: none). Topics and weights of any
// origin can be given, e.g. another library's topic matrix with its α.
// The E-step's fixed-point steps are over-relaxed as in the EM passes
// (DefaultEStepOverrelax): the same posterior in fewer iterations.
func Params(topics [][]float64, alpha []float64, single bool, smooth float64) (*TopicParams, error) {
	k := len(topics)
	if k == 0 || len(alpha) != k {
		return nil, fmt.Errorf("lda: %d topics and %d weights", k, len(alpha))
	}
	d := len(topics[0])
	switch {
	case smooth == 0:
		smooth = DefaultSmooth
	case smooth < 0:
		smooth = 0
	}
	p := &TopicParams{K: k, D: d, Alpha: append([]float64(nil), alpha...), Beta: make([]float64, k*d), Single: single, Overrelax: DefaultEStepOverrelax}
	for j, row := range topics {
		if len(row) != d {
			return nil, fmt.Errorf("lda: topic %d has %d words, topic 0 has %d", j, len(row), d)
		}
		s := 0.0
		for _, v := range row {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("lda: topic %d has an entry %g: topics must be distributions", j, v)
			}
			s += v
		}
		if !(s > 0) {
			return nil, fmt.Errorf("lda: topic %d has no mass", j)
		}
		for w, v := range row {
			p.Beta[w*k+j] = (1-smooth)*v/s + smooth/float64(d)
		}
	}
	if single {
		s := 0.0
		for _, a := range p.Alpha {
			s += a
		}
		for j := range p.Alpha {
			p.Alpha[j] /= s
		}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// ModelParams is Params of a fitted model (lda or topic).
func ModelParams(m *models.Model, smooth float64) (*TopicParams, error) {
	if m.Model != "lda" && m.Model != "topic" {
		return nil, fmt.Errorf("lda: a %q model has no document topics", m.Model)
	}
	return Params(m.Topics, m.Alpha, m.Model == "topic", smooth)
}

// Infer computes the topic shares of every document of src with the
// topics fixed, on workers goroutines (GOMAXPROCS when 0), and hands them
// to emit batch by batch in document order: n documents from the source's
// document start, theta holding k shares per document (row-major; emit
// must not keep it). For LDA the shares are the posterior mean of θ under
// the variational posterior, γ/Σγ (for an empty document, α/α₀); for the
// single-topic model, the posterior probability of each topic. The result
// does not depend on workers, and memory is a batch per worker.
func Infer(ctx context.Context, src stream.DocSource, p *TopicParams, workers int, emit func(start int64, n int, theta []float64) error) error {
	if d := src.Info().Terms; d > 0 && d != p.D {
		return fmt.Errorf("lda: the model has %d words, the input %d", p.D, d)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type part struct {
		es    *EStep
		start int64
		n     int
		theta []float64
	}
	k := p.K
	return implicit.InOrder(ctx, src.Docs, workers,
		func() *part { return &part{es: NewEStep(p)} },
		func(q *part, b *stream.Docs) {
			q.start, q.n = b.Start, b.Len()
			if cap(q.theta) < q.n*k {
				q.theta = make([]float64, q.n*k, q.n*k+q.n*k/4)
			}
			q.theta = q.theta[:q.n*k]
			for i := range q.n {
				terms, counts := b.Doc(i)
				shares(q.theta[i*k:(i+1)*k], q.es.Infer(terms, counts), p.Single)
			}
		},
		func(q *part) error { return emit(q.start, q.n, q.theta) })
}

// shares sets dst to the topic shares of a posterior: γ/Σγ, or the single
// topic's posterior as it is.
func shares(dst, post []float64, single bool) {
	if single {
		copy(dst, post)
		return
	}
	s := 0.0
	for _, g := range post {
		s += g
	}
	for j, g := range post {
		dst[j] = g / s
	}
}
