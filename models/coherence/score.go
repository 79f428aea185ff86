package coherence

import (
	"context"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// DefaultTop is the number of top words per topic scored by default (the
// usual choice of the coherence literature).
const DefaultTop = 10

// npmiEps keeps the logarithms of NPMI finite for pairs that never occur
// together (as gensim's implementation does).
const npmiEps = 1e-12

// Options set up Score. The zero value scores the top DefaultTop words with
// one worker per CPU.
type Options struct {
	// Top is the number of most probable words per topic scored (default
	// DefaultTop).
	Top int
	// Workers is the number of goroutines counting co-occurrences (default:
	// stream's default, one per CPU). The result does not depend on it.
	Workers int
}

// Result holds the scores of a model's topics over a corpus.
type Result struct {
	// Top is the number of top words per topic that were scored.
	Top int `json:"top"`
	// Docs is the number of documents counted (empty ones included).
	Docs int64 `json:"docs"`
	// UMass is the mean over topics of TopicUMass.
	UMass float64 `json:"umass"`
	// NPMI is the mean over topics of TopicNPMI.
	NPMI float64 `json:"npmi"`
	// Diversity is the number of distinct words among all topics' top words
	// divided by their total number (topics × Top): 1 when no two topics
	// share a top word.
	Diversity float64 `json:"diversity"`
	// TopWords[t] lists the term ids of topic t's top words, most probable
	// first (ties broken by the smaller term id).
	TopWords [][]int `json:"top_words"`
	// TopicUMass[t] is the UMass coherence of topic t (Mimno et al., 2011),
	// averaged over its word pairs rather than summed: the mean over m > l
	// of log((D(w_m, w_l) + 1) / D(w_l)), w ordered by decreasing
	// probability, D(·) the number of documents containing all the given
	// words. At most 0; closer to 0 is more coherent. A conditioning word
	// found in no document counts as found in one.
	TopicUMass []float64 `json:"topic_umass"`
	// TopicNPMI[t] is the normalized pointwise mutual information of topic
	// t's top words (Bouma, 2009), averaged over its word pairs, with
	// probabilities of occurring in a document: NPMI(a, b) =
	// log((P(a,b) + ε) / (P(a)P(b))) / −log(P(a,b) + ε), ε = 1e-12. In
	// [−1, 1]; higher is more coherent. A pair with a word found in no
	// document scores −1, words found in every document together score 1.
	TopicNPMI []float64 `json:"topic_npmi"`
}

// TopWords returns the term ids of the top most probable entries of each
// row of topics, most probable first, ties broken by the smaller id
// (models.TopWords at λ = 1).
func TopWords(topics [][]float64, top int) [][]int {
	return models.TopWords(topics, nil, top, 1)
}

// Diversity returns the share of distinct words among all the lists of top
// words (0 when there are none).
func Diversity(top [][]int) float64 {
	seen := map[int]bool{}
	n := 0
	for _, ws := range top {
		for _, w := range ws {
			seen[w] = true
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(len(seen)) / float64(n)
}

// Score reads src once and scores the k topics (rows of length d, term id =
// position; they need not be normalized, only their order matters) by
// coherence and diversity. The counts are exact integers, so the result is
// the same for any number of workers.
func Score(ctx context.Context, src stream.DocSource, topics [][]float64, o Options) (*Result, error) {
	if len(topics) == 0 {
		return nil, fmt.Errorf("coherence: no topics to score")
	}
	d := len(topics[0])
	for t, row := range topics {
		if len(row) != d {
			return nil, fmt.Errorf("coherence: topic %d has %d entries, topic 0 has %d", t, len(row), d)
		}
	}
	if terms := src.Info().Terms; terms > 0 && terms != d {
		return nil, fmt.Errorf("%s: vocabulary of %d words, but the topics have %d", src.Info().Path, terms, d)
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	if o.Top < 2 {
		return nil, fmt.Errorf("coherence: need at least 2 top words per topic, got %d", o.Top)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = stream.Options{}.WithDefaults().Workers
	}
	top := TopWords(topics, o.Top)
	c := newCounter(top, d)
	parts := make([]*counts, workers)
	for w := range parts {
		parts[w] = c.newCounts()
	}
	err := stream.Each(ctx, src.Docs, workers, func(w int, b *stream.Docs) error {
		if err := b.Validate(d); err != nil {
			return fmt.Errorf("%s: %w", src.Info().Path, err)
		}
		for i := range b.Len() {
			terms, _ := b.Doc(i)
			c.add(parts[w], terms)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := parts[0]
	for _, p := range parts[1:] {
		all.merge(p)
	}
	return c.result(all), nil
}

// member is one place a word holds among the top words: topic t, rank r.
type member struct{ t, r int32 }

// counter knows where each top word stands; counts hold one worker's tallies.
type counter struct {
	top    [][]int
	m      int        // top words per topic: min(Top, d)
	word   []int32    // term id → index among the distinct top words, −1 if none
	places [][]member // distinct top word → its places
}

// counts are the document frequencies of the distinct top words and, per
// topic, of each pair of its ranks (co[t][r*m+s], r < s).
type counts struct {
	docs int64
	df   []int64
	co   [][]int64
	// scratch for one document
	seen    []bool
	present []int32
	ranks   [][]int32
	touched []int32
}

func newCounter(top [][]int, d int) *counter {
	c := &counter{top: top, word: make([]int32, d)}
	for i := range c.word {
		c.word[i] = -1
	}
	for t, ws := range top {
		c.m = max(c.m, len(ws))
		for r, w := range ws {
			u := c.word[w]
			if u < 0 {
				u = int32(len(c.places))
				c.word[w] = u
				c.places = append(c.places, nil)
			}
			c.places[u] = append(c.places[u], member{int32(t), int32(r)})
		}
	}
	return c
}

func (c *counter) newCounts() *counts {
	k := len(c.top)
	n := &counts{df: make([]int64, len(c.places)), co: make([][]int64, k),
		seen: make([]bool, len(c.places)), ranks: make([][]int32, k)}
	for t := range n.co {
		n.co[t] = make([]int64, c.m*c.m)
	}
	return n
}

// add counts one document given by its term ids.
func (c *counter) add(n *counts, terms []int32) {
	n.docs++
	n.present = n.present[:0]
	for _, w := range terms {
		if u := c.word[w]; u >= 0 && !n.seen[u] {
			n.seen[u] = true
			n.present = append(n.present, u)
		}
	}
	n.touched = n.touched[:0]
	for _, u := range n.present {
		n.seen[u] = false
		n.df[u]++
		for _, p := range c.places[u] {
			if len(n.ranks[p.t]) == 0 {
				n.touched = append(n.touched, p.t)
			}
			n.ranks[p.t] = append(n.ranks[p.t], p.r)
		}
	}
	for _, t := range n.touched {
		rs, co := n.ranks[t], n.co[t]
		for i, r := range rs {
			for _, s := range rs[i+1:] {
				co[int(min(r, s))*c.m+int(max(r, s))]++
			}
		}
		n.ranks[t] = rs[:0]
	}
}

func (n *counts) merge(o *counts) {
	n.docs += o.docs
	for i, v := range o.df {
		n.df[i] += v
	}
	for t, row := range o.co {
		for i, v := range row {
			n.co[t][i] += v
		}
	}
}

func (c *counter) result(n *counts) *Result {
	k := len(c.top)
	res := &Result{Top: c.m, Docs: n.docs, TopWords: c.top, Diversity: Diversity(c.top),
		TopicUMass: make([]float64, k), TopicNPMI: make([]float64, k)}
	N := float64(n.docs)
	for t, ws := range c.top {
		var umass, npmi float64
		pairs := 0
		for s := 1; s < len(ws); s++ {
			for r := 0; r < s; r++ {
				dl := float64(n.df[c.word[ws[r]]])
				dm := float64(n.df[c.word[ws[s]]])
				dj := float64(n.co[t][r*c.m+s])
				umass += math.Log((dj + 1) / max(dl, 1))
				npmi += NPMI(dj, dl, dm, N)
				pairs++
			}
		}
		if pairs > 0 {
			res.TopicUMass[t] = umass / float64(pairs)
			res.TopicNPMI[t] = npmi / float64(pairs)
		}
		res.UMass += res.TopicUMass[t] / float64(k)
		res.NPMI += res.TopicNPMI[t] / float64(k)
	}
	return res
}

// NPMI is the normalized pointwise mutual information of two words found
// together in joint of n documents, the first in da and the second in db
// documents (the convention of Result.TopicNPMI).
func NPMI(joint, da, db, n float64) float64 {
	if da == 0 || db == 0 || n == 0 {
		return -1
	}
	pj, pa, pb := joint/n, da/n, db/n
	if pj == 1 {
		return 1
	}
	v := math.Log((pj+npmiEps)/(pa*pb)) / -math.Log(pj+npmiEps)
	return max(-1, min(1, v)) // ε can push it a hair outside
}

// ScoreModel scores the topics of m over src (Score), after checking that
// the two agree on the vocabulary when both know their words: the scores of
// a model against a corpus built with another vocabulary would be noise.
func ScoreModel(ctx context.Context, src stream.DocSource, m *models.Model, o Options) (*Result, error) {
	if v := src.Info().Vocab; v != nil && m.Vocab != nil {
		if len(v) != len(m.Vocab) {
			return nil, fmt.Errorf("%s: vocabulary of %d words, but the model's has %d", src.Info().Path, len(v), len(m.Vocab))
		}
		for i := range v {
			if v[i] != m.Vocab[i] {
				return nil, fmt.Errorf("%s: term id %d is %q, but %q in the model's vocabulary", src.Info().Path, i, v[i], m.Vocab[i])
			}
		}
	}
	return Score(ctx, src, m.Topics, o)
}
