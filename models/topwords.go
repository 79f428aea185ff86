package models

import (
	"cmp"
	"math"
	"slices"
)

// TopWords returns, for each topic (a row of word probabilities φ_t), the
// term ids of its n most relevant words, most relevant first, ties broken by
// the smaller id. Relevance is LDAvis's (Sievert & Shirley, 2014):
//
//	r_λ(w) = λ·log φ_t(w) + (1−λ)·log(φ_t(w)/p(w)),
//
// with p(w) = Σ_t π_t φ_t(w) the model's word distribution, π the topics'
// weights alpha normalised (equal weights when alpha is nil). λ = 1 ranks by
// probability alone; a smaller λ raises words specific to the topic over
// words every topic shares (at 0, by lift alone). Words of probability 0
// in the topic come last. lambda must be in [0, 1].
func TopWords(topics [][]float64, alpha []float64, n int, lambda float64) [][]int {
	out := make([][]int, len(topics))
	if len(topics) == 0 {
		return out
	}
	var logP []float64
	if lambda < 1 {
		logP = WordMarginal(topics, alpha)
		for w, v := range logP {
			logP[w] = math.Log(v)
		}
	}
	for t, row := range topics {
		score := row
		if lambda < 1 {
			score = make([]float64, len(row))
			for w, x := range row {
				score[w] = math.Inf(-1)
				if x > 0 {
					score[w] = lambda*math.Log(x) + (1-lambda)*(math.Log(x)-logP[w])
				}
			}
		}
		idx := make([]int, len(row))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
		out[t] = idx[:min(n, len(idx))]
	}
	return out
}

// WordMarginal returns the model's word distribution p(w) = Σ_t π_t φ_t(w)
// over the topics (rows φ_t), π = TopicWeights(alpha).
func WordMarginal(topics [][]float64, alpha []float64) []float64 {
	if len(topics) == 0 {
		return nil
	}
	pi := TopicWeights(len(topics), alpha)
	p := make([]float64, len(topics[0]))
	for t, row := range topics {
		for w, x := range row {
			p[w] += pi[t] * x
		}
	}
	return p
}

// TopicWeights returns the weights of k topics, alpha normalised to sum 1
// (equal weights when alpha is nil).
func TopicWeights(k int, alpha []float64) []float64 {
	pi := make([]float64, k)
	sum := 0.0
	for t := range pi {
		pi[t] = 1
		if alpha != nil {
			pi[t] = alpha[t]
		}
		sum += pi[t]
	}
	for t := range pi {
		pi[t] /= sum
	}
	return pi
}
