package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TopWords ranks by r_λ(w) = λ log φ + (1−λ) log(φ/p) computed by brute
// force, with p weighted by α.
func TestTopWordsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k, d := 4, 30
	topics := make([][]float64, k)
	alpha := make([]float64, k)
	for j := range topics {
		alpha[j] = 0.1 + rng.Float64()
		topics[j] = make([]float64, d)
		s := 0.0
		for w := range topics[j] {
			topics[j][w] = rng.ExpFloat64()
			s += topics[j][w]
		}
		for w := range topics[j] {
			topics[j][w] /= s
		}
	}
	for _, lambda := range []float64{0, 0.3, 0.6, 1} {
		got := TopWords(topics, alpha, 7, lambda)
		asum := 0.0
		for _, a := range alpha {
			asum += a
		}
		for j, row := range topics {
			rel := make([]float64, d)
			for w, x := range row {
				p := 0.0
				for i := range topics {
					p += alpha[i] / asum * topics[i][w]
				}
				rel[w] = lambda*math.Log(x) + (1-lambda)*math.Log(x/p)
			}
			for r := 1; r < len(got[j]); r++ {
				if rel[got[j][r-1]] < rel[got[j][r]]-1e-12 {
					t.Fatalf("λ=%g topic %d: word %d (relevance %g) ranked above word %d (%g)", lambda, j, got[j][r-1], rel[got[j][r-1]], got[j][r], rel[got[j][r]])
				}
			}
			// Nothing left out beats the last one shown.
			last := rel[got[j][len(got[j])-1]]
			for w := range d {
				if !slices.Contains(got[j], w) && rel[w] > last+1e-12 {
					t.Fatalf("λ=%g topic %d: word %d (relevance %g) left out, the last shown has %g", lambda, j, w, rel[w], last)
				}
			}
		}
	}
}

// A word every topic shares leads by probability and falls behind the
// topic's own words by relevance; words of probability 0 come last.
func TestTopWordsSharedWord(t *testing.T) {
	topics := [][]float64{
		{0.5, 0.3, 0.2, 0, 0},
		{0.5, 0, 0, 0.3, 0.2},
	}
	if got := TopWords(topics, nil, 3, 1); !slices.Equal(got[0], []int{0, 1, 2}) || !slices.Equal(got[1], []int{0, 3, 4}) {
		t.Fatalf("by probability: %v, want [[0 1 2] [0 3 4]]", got)
	}
	got := TopWords(topics, nil, 5, 0.2)
	if !slices.Equal(got[0], []int{1, 2, 0, 3, 4}) || !slices.Equal(got[1], []int{3, 4, 0, 1, 2}) {
		t.Fatalf("by relevance 0.2: %v, want [[1 2 0 3 4] [3 4 0 1 2]]", got)
	}
}
