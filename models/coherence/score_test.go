package coherence

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// corpus draws n documents over d words; word w is in a document with a
// probability that grows with w, and words 0 and 1 come together, so that
// pair counts vary.
func corpus(n, d int, seed uint64) *stream.MemoryDocs {
	r := rand.New(rand.NewPCG(seed, 1))
	all := &stream.Docs{Offsets: []int{0}}
	for range n {
		both := r.Float64() < 0.3
		for w := range d {
			if (w < 2 && both) || r.Float64() < float64(w+1)/float64(2*d) {
				all.Add(int32(w), int32(1+r.IntN(3)))
			}
		}
		all.EndDoc()
	}
	all.EndDoc() // one empty document
	return &stream.MemoryDocs{All: all, Terms: d, BatchRows: 7}
}

// bruteForce computes the scores from sets of words per document, pair by
// pair, straight from the definitions.
func bruteForce(docs *stream.Docs, top [][]int) (umass, npmi []float64) {
	sets := make([]map[int]bool, docs.Len())
	for i := range sets {
		sets[i] = map[int]bool{}
		terms, _ := docs.Doc(i)
		for _, w := range terms {
			sets[i][int(w)] = true
		}
	}
	count := func(ws ...int) float64 {
		c := 0
	doc:
		for _, s := range sets {
			for _, w := range ws {
				if !s[w] {
					continue doc
				}
			}
			c++
		}
		return float64(c)
	}
	n := float64(len(sets))
	for _, ws := range top {
		var u, p float64
		pairs := 0
		for m := 1; m < len(ws); m++ {
			for l := 0; l < m; l++ {
				dl := count(ws[l])
				u += math.Log((count(ws[m], ws[l]) + 1) / math.Max(dl, 1))
				pj := count(ws[m], ws[l]) / n
				pa, pb := count(ws[m])/n, dl/n
				switch {
				case pa == 0 || pb == 0:
					p += -1
				case pj == 1:
					p += 1
				default:
					p += math.Log((pj+1e-12)/(pa*pb)) / -math.Log(pj+1e-12)
				}
				pairs++
			}
		}
		umass = append(umass, u/float64(pairs))
		npmi = append(npmi, p/float64(pairs))
	}
	return umass, npmi
}

func TestScoreMatchesBruteForce(t *testing.T) {
	const d = 9
	src := corpus(60, d, 3)
	r := rand.New(rand.NewPCG(5, 5))
	topics := make([][]float64, 4)
	for i := range topics {
		topics[i] = make([]float64, d)
		for w := range topics[i] {
			topics[i][w] = r.Float64()
		}
	}
	topics[3] = append([]float64(nil), topics[0]...) // a repeated topic shares all its top words
	for _, top := range []int{2, 4, 9, 20} {
		for _, workers := range []int{1, 3} {
			res, err := Score(context.Background(), src, topics, Options{Top: top, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			want := TopWords(topics, top)
			u, p := bruteForce(src.All, want)
			if res.Docs != int64(src.All.Len()) {
				t.Fatalf("docs %d, want %d", res.Docs, src.All.Len())
			}
			var mu, mp float64
			for i := range topics {
				if math.Abs(res.TopicUMass[i]-u[i]) > 1e-12 || math.Abs(res.TopicNPMI[i]-p[i]) > 1e-12 {
					t.Fatalf("top %d workers %d topic %d: umass %g npmi %g, brute force %g %g", top, workers, i, res.TopicUMass[i], res.TopicNPMI[i], u[i], p[i])
				}
				mu += u[i] / float64(len(topics))
				mp += p[i] / float64(len(topics))
			}
			if math.Abs(res.UMass-mu) > 1e-12 || math.Abs(res.NPMI-mp) > 1e-12 {
				t.Fatalf("means %g %g, want %g %g", res.UMass, res.NPMI, mu, mp)
			}
		}
	}
}

func TestTopWordsAndDiversity(t *testing.T) {
	topics := [][]float64{
		{0.1, 0.4, 0.2, 0.2, 0.1},
		{0.5, 0.0, 0.0, 0.2, 0.3},
		{0.1, 0.4, 0.2, 0.2, 0.1},
	}
	top := TopWords(topics, 3)
	want := [][]int{{1, 2, 3}, {0, 4, 3}, {1, 2, 3}}
	for i := range want {
		for j := range want[i] {
			if top[i][j] != want[i][j] {
				t.Fatalf("top words %v, want %v", top, want)
			}
		}
	}
	// distinct: 1, 2, 3, 0, 4 of 9
	if got := Diversity(top); math.Abs(got-5.0/9) > 1e-15 {
		t.Fatalf("diversity %g, want 5/9", got)
	}
	if got := Diversity([][]int{{1, 2}, {3, 4}}); got != 1 {
		t.Fatalf("disjoint top words: diversity %g, want 1", got)
	}
}

func TestNPMIBounds(t *testing.T) {
	for _, c := range []struct {
		joint, a, b, n, want float64
	}{
		{5, 5, 5, 10, 1},    // always together
		{10, 10, 10, 10, 1}, // in every document
		{0, 5, 5, 10, math.Log(1e-12/0.25) / -math.Log(1e-12)}, // never together: just above −1
		{0, 0, 5, 10, -1}, // a word never seen
	} {
		got := NPMI(c.joint, c.a, c.b, c.n)
		if math.Abs(got-c.want) > 1e-9 || got < -1 || got > 1 {
			t.Fatalf("NPMI(%v) = %g, want %g", c, got, c.want)
		}
	}
	// independent words: P(a,b) = P(a)P(b) gives 0
	if got := NPMI(25, 50, 50, 100); math.Abs(got) > 1e-9 {
		t.Fatalf("independent words: NPMI %g, want 0", got)
	}
}

func TestCoherentTopicScoresHigher(t *testing.T) {
	// Words 0 and 1 occur together in 30% of the documents; a topic ranking
	// them first is more coherent than one ranking 0 with a word independent of it.
	src := corpus(400, 6, 9)
	together := []float64{0.5, 0.4, 0.05, 0.02, 0.02, 0.01}
	apart := []float64{0.5, 0.01, 0.05, 0.02, 0.02, 0.4}
	res, err := Score(context.Background(), src, [][]float64{together, apart}, Options{Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.TopicUMass[0] <= res.TopicUMass[1] || res.TopicNPMI[0] <= res.TopicNPMI[1] {
		t.Fatalf("co-occurring pair umass %g npmi %g, not above the other pair's %g %g",
			res.TopicUMass[0], res.TopicNPMI[0], res.TopicUMass[1], res.TopicNPMI[1])
	}
}

func TestScoreErrors(t *testing.T) {
	src := corpus(5, 4, 1)
	for _, c := range []struct {
		name   string
		topics [][]float64
		o      Options
		want   string
	}{
		{"no topics", nil, Options{}, "no topics"},
		{"ragged", [][]float64{{1, 0, 0, 0}, {1, 0}}, Options{}, "topic 1 has 2 entries"},
		{"vocabulary", [][]float64{{1, 0, 0}}, Options{}, "vocabulary of 4 words"},
		{"one word", [][]float64{{1, 0, 0, 0}}, Options{Top: 1}, "at least 2"},
	} {
		_, err := Score(context.Background(), src, c.topics, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	bad := &stream.MemoryDocs{All: &stream.Docs{Offsets: []int{0, 1}, Terms: []int32{7}, Counts: []int32{1}}}
	if _, err := Score(context.Background(), bad, [][]float64{{0.5, 0.5, 0, 0}}, Options{}); err == nil {
		t.Error("a term id beyond the topics' vocabulary was accepted")
	}
}

func TestScoreModelVocabulary(t *testing.T) {
	src := corpus(20, 3, 2)
	src.Vocab = []string{"a", "b", "c"}
	m := &models.Model{Model: "lda", K: 1, D: 3, Alpha: []float64{1}, Topics: [][]float64{{0.5, 0.3, 0.2}}}
	for _, c := range []struct {
		vocab []string
		ok    bool
	}{{nil, true}, {[]string{"a", "b", "c"}, true}, {[]string{"a", "x", "c"}, false}} {
		m.Vocab = c.vocab
		_, err := ScoreModel(context.Background(), src, m, Options{})
		if (err == nil) != c.ok {
			t.Errorf("model vocabulary %v: error %v", c.vocab, err)
		}
	}
}
