package lda

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// oneTopicDocs draws, for each topic j, a document of n tokens from topic j
// alone.
func oneTopicDocs(r *rand.Rand, topics [][]float64, n int) *stream.MemoryDocs {
	d := len(topics[0])
	all := stream.NewDocs(0)
	counts := make([]int32, d)
	for _, row := range topics {
		clear(counts)
		for range n {
			u, w := r.Float64(), 0
			for ; w < d-1 && u >= row[w]; w++ {
				u -= row[w]
			}
			counts[w]++
		}
		for w, c := range counts {
			if c > 0 {
				all.Add(int32(w), c)
			}
		}
		all.EndDoc()
	}
	all.EndDoc() // an empty document: the prior
	return &stream.MemoryDocs{All: all.Clone(), Terms: d, BatchRows: 2}
}

// TestInferOneTopicDocument checks that a document drawn from one topic
// gets its mass there, for LDA and the single-topic model, the same for any
// number of workers, in document order.
func TestInferOneTopicDocument(t *testing.T) {
	for _, single := range []bool{false, true} {
		c, err := synth.NewLDA(synth.LDAConfig{Docs: 10, Vocab: 300, K: 6, Alpha0: 1, DocLen: 50, Seed: 4, Single: single})
		if err != nil {
			t.Fatal(err)
		}
		tr := c.Truth
		docs := oneTopicDocs(rand.New(rand.NewPCG(1, 1)), tr.Topics, 100)
		p, err := Params(tr.Topics, tr.Alpha, single, 0)
		if err != nil {
			t.Fatal(err)
		}
		var runs [][]float64
		for _, workers := range []int{1, 3} {
			var all []float64
			next := int64(0)
			err := Infer(context.Background(), docs, p, workers, func(start int64, n int, theta []float64) error {
				if start != next {
					t.Fatalf("batch from document %d, want %d", start, next)
				}
				next += int64(n)
				all = append(all, theta...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, all)
		}
		if !reflect.DeepEqual(runs[0], runs[1]) {
			t.Errorf("single=%t: topic shares differ between 1 and 3 workers", single)
		}
		k := tr.K
		theta := runs[0]
		if len(theta) != (k+1)*k {
			t.Fatalf("%d shares for %d documents", len(theta), k+1)
		}
		for j := range k {
			row := theta[j*k : (j+1)*k]
			if row[j] < 0.85 {
				t.Errorf("single=%t: the document drawn from topic %d gives it %.3f: %.3f", single, j, row[j], row)
			}
		}
		// The empty document gets the prior mean.
		asum := 0.0
		for _, a := range tr.Alpha {
			asum += a
		}
		for j, a := range tr.Alpha {
			if got := theta[k*k+j]; abs(got-a/asum) > 1e-12 {
				t.Errorf("single=%t: empty document: share %d is %g, prior %g", single, j, got, a/asum)
			}
		}
	}
}

// TestPerplexityTrueBeatsRandom scores generated documents with the true
// topics, a fitted model, and random topics: the truth scores best, the
// fit close to it, random topics far worse. The score does not depend on
// workers.
func TestPerplexityTrueBeatsRandom(t *testing.T) {
	cc := synth.LDAConfig{Docs: 4000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 60, Seed: 31}
	src, truth := corpus(t, cc)
	r := rand.New(rand.NewPCG(2, 2))
	random := make([][]float64, truth.K)
	for j := range random {
		random[j] = make([]float64, truth.D)
		s := 0.0
		for w := range random[j] {
			random[j][w] = r.ExpFloat64()
			s += random[j][w]
		}
		for w := range random[j] {
			random[j][w] /= s
		}
	}
	fit, err := Fit(context.Background(), src, Config{K: 5, Alpha0: 1, Seed: 1, EM: EM{Passes: 10, FitAlpha: true}})
	if err != nil {
		t.Fatal(err)
	}
	score := func(topics [][]float64, alpha []float64, workers int) float64 {
		h, err := Perplexity(context.Background(), src, topics, alpha, ScoreOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if h.Docs != cc.Docs || h.Observed < h.Predicted || h.Predicted < h.Observed-h.Docs {
			t.Fatalf("%d documents scored, %d observed and %d predicted tokens", h.Docs, h.Observed, h.Predicted)
		}
		return h.Perplexity
	}
	pt, pf, pr := score(truth.Topics, truth.Alpha, 2), score(fit.Topics, fit.Alpha, 2), score(random, truth.Alpha, 2)
	t.Logf("held-out perplexity: true topics %.2f, fitted %.2f, random %.2f (vocabulary %d)", pt, pf, pr, cc.Vocab)
	if !(pt < pr*0.5) || !(pf < pt*1.03) || !(pt < pf*1.03) {
		t.Errorf("perplexity: true %.2f, fitted %.2f, random %.2f", pt, pf, pr)
	}
	if p1 := score(truth.Topics, truth.Alpha, 1); p1 != pt {
		t.Errorf("perplexity %v with 1 worker, %v with 2", p1, pt)
	}
}

// TestPerplexitySingleTopic scores documents of the single-topic model
// with its true topics and weights, and with random topics.
func TestPerplexitySingleTopic(t *testing.T) {
	src, truth := corpus(t, synth.LDAConfig{Docs: 2000, Vocab: 300, K: 4, DocLen: 40, Seed: 12, Single: true})
	r := rand.New(rand.NewPCG(3, 3))
	random := make([][]float64, truth.K)
	for j := range random {
		random[j] = make([]float64, truth.D)
		for w := range random[j] {
			random[j][w] = r.Float64() / float64(truth.D) * 2
		}
	}
	opt := ScoreOptions{Single: true, Workers: 2}
	ht, err := Perplexity(context.Background(), src, truth.Topics, truth.Alpha, opt)
	if err != nil {
		t.Fatal(err)
	}
	hr, err := Perplexity(context.Background(), src, random, truth.Alpha, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("single topic: true %.2f, random %.2f", ht.Perplexity, hr.Perplexity)
	if !(ht.Perplexity < 0.5*hr.Perplexity) {
		t.Errorf("held-out perplexity of the true topics %.2f, of random ones %.2f", ht.Perplexity, hr.Perplexity)
	}
}
