package lda

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
)

// HeldOut is the document-completion score of a model on held-out
// documents (Perplexity).
type HeldOut struct {
	// Docs is the number of documents scored; Skipped those with fewer
	// than two tokens (nothing to observe or nothing to predict).
	Docs    int64 `json:"docs"`
	Skipped int64 `json:"skipped"`
	// Observed and Predicted count the tokens of the two halves.
	Observed  int64 `json:"observed_tokens"`
	Predicted int64 `json:"predicted_tokens"`
	// LogLik is Σ log p(w) over the predicted tokens, and Perplexity
	// exp(−LogLik/Predicted).
	LogLik     float64 `json:"log_likelihood"`
	Perplexity float64 `json:"perplexity"`
	// Smooth is the weight of the uniform distribution mixed into every
	// topic (Params).
	Smooth float64 `json:"smooth"`
}

// scoreTol is the E-step tolerance of Perplexity, tighter than the EM
// passes' (one pass over the held-out documents; the score should not
// depend on how far each document's iteration went).
const scoreTol = 1e-3

// ScoreOptions are the settings of Perplexity.
type ScoreOptions struct {
	// Single scores the single-topic model (alpha holds topic weights).
	Single bool
	// Smooth is the weight of the uniform distribution mixed into every
	// topic (Params; 0: DefaultSmooth).
	Smooth float64
	// Workers is the number of goroutines (0: GOMAXPROCS); the result does
	// not depend on it.
	Workers int
}

// Perplexity scores a model given by its topics (k rows over the d words,
// each a distribution) and alpha (LDA's Dirichlet parameters, or with
// opt.Single the topic weights) on the held-out documents of src, by
// document completion. Topics from anywhere (another library's topic
// matrix and its α) are scored the same way:
//
//   - every topic is smoothed, β̃ = (1−ε)·β + ε/d with ε = opt.Smooth
//     (DefaultSmooth, 0.001; see Params);
//   - each document's tokens, taken in the order the document lists its
//     words with the copies of a word together (word t1 c1 times, then t2
//     c2 times, …), are split alternately into an observed half (tokens 0,
//     2, 4, …) and a predicted half (tokens 1, 3, 5, …); documents of fewer
//     than two tokens are skipped;
//   - the topic shares θ̂ are inferred from the observed half alone with the
//     topics fixed (as Infer: γ/Σγ of the variational E-step for LDA, with
//     tolerance 0.001, the posterior over the topic for the single-topic
//     model);
//   - each predicted token w scores log Σ_j θ̂_j β̃_jw, and the perplexity is
//     exp(−Σ log p(w) / predicted tokens).
func Perplexity(ctx context.Context, src stream.DocSource, topics [][]float64, alpha []float64, opt ScoreOptions) (*HeldOut, error) {
	smooth := opt.Smooth
	if smooth == 0 {
		smooth = DefaultSmooth
	}
	p, err := Params(topics, alpha, opt.Single, smooth)
	if err != nil {
		return nil, err
	}
	p.Tol = scoreTol
	if d := src.Info().Terms; d > 0 && d != p.D {
		return nil, fmt.Errorf("lda: the model has %d words, the held-out documents %d", p.D, d)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type part struct {
		es          *EStep
		theta       []float64
		obsT, predT []int32
		obsC, predC []int32
		out         HeldOut
	}
	k := p.K
	res := &HeldOut{Smooth: max(smooth, 0)}
	err = implicit.InOrder(ctx, src.Docs, workers,
		func() *part { return &part{es: NewEStep(p), theta: make([]float64, k)} },
		func(q *part, b *stream.Docs) {
			q.out = HeldOut{}
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				q.obsT, q.obsC, q.predT, q.predC = q.obsT[:0], q.obsC[:0], q.predT[:0], q.predC[:0]
				pos := 0
				for j, t := range terms {
					c := int(counts[j])
					obs := c / 2
					if pos%2 == 0 {
						obs = (c + 1) / 2
					}
					if obs > 0 {
						q.obsT, q.obsC = append(q.obsT, t), append(q.obsC, int32(obs))
					}
					if c-obs > 0 {
						q.predT, q.predC = append(q.predT, t), append(q.predC, int32(c-obs))
					}
					pos += c
				}
				if pos < 2 {
					q.out.Skipped++
					continue
				}
				shares(q.theta, q.es.Infer(q.obsT, q.obsC), p.Single)
				q.out.Docs++
				for j, t := range q.predT {
					c := float64(q.predC[j])
					q.out.Predicted += int64(q.predC[j])
					q.out.LogLik += c * math.Log(floats.Dot(q.theta, p.Beta[int(t)*k:int(t+1)*k]))
				}
				for _, c := range q.obsC {
					q.out.Observed += int64(c)
				}
			}
		},
		func(q *part) error {
			res.Docs += q.out.Docs
			res.Skipped += q.out.Skipped
			res.Observed += q.out.Observed
			res.Predicted += q.out.Predicted
			res.LogLik += q.out.LogLik
			return nil
		})
	if err != nil {
		return nil, err
	}
	if res.Predicted == 0 {
		return nil, fmt.Errorf("lda: no held-out document has two tokens to split")
	}
	res.Perplexity = math.Exp(-res.LogLik / float64(res.Predicted))
	return res, nil
}
