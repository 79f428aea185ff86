package synth

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

func collect(t testing.TB, src stream.DocSource) *stream.Docs {
	t.Helper()
	all, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// The corpus is the same for any number of workers and batch boundaries fall
// where the configuration says.
func TestLDADeterministicAcrossWorkers(t *testing.T) {
	cfg := LDAConfig{Docs: 3000, Vocab: 300, K: 5, DocLen: 30, Seed: 7, BatchRows: 256}
	var prev *stream.Docs
	for _, w := range []int{1, 2, 5} {
		cfg.Workers = w
		c, err := NewLDA(cfg)
		if err != nil {
			t.Fatal(err)
		}
		all := collect(t, c)
		if all.Len() != 3000 {
			t.Fatalf("workers=%d: %d docs", w, all.Len())
		}
		if err := all.Validate(300); err != nil {
			t.Fatal(err)
		}
		if prev != nil && (!slices.Equal(prev.Offsets, all.Offsets) || !slices.Equal(prev.Terms, all.Terms) || !slices.Equal(prev.Counts, all.Counts)) {
			t.Fatalf("workers=%d gives a different corpus", w)
		}
		prev = all
	}
	cfg.Seed = 8
	c, _ := NewLDA(cfg)
	if other := collect(t, c); slices.Equal(other.Terms, prev.Terms) {
		t.Fatal("a different seed gives the same corpus")
	}
}

// Empirical word frequencies match the model's expected distribution
// Σᵢ (αᵢ/α₀) topicᵢ, lengths are at least 3 with the right mean, and truth
// topics are distributions.
func TestLDAMatchesModel(t *testing.T) {
	for _, single := range []bool{false, true} {
		cfg := LDAConfig{Docs: 20000, Vocab: 50, K: 4, Alpha0: 2, DocLen: 20, Seed: 1, Single: single}
		c, err := NewLDA(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr := c.Truth
		var asum float64
		for _, a := range tr.Alpha {
			asum += a
		}
		want := make([]float64, cfg.Vocab)
		for i, row := range tr.Topics {
			var s float64
			for w, p := range row {
				s += p
				want[w] += tr.Alpha[i] / asum * p
			}
			if math.Abs(s-1) > 1e-9 {
				t.Fatalf("topic %d sums to %g", i, s)
			}
		}
		all := collect(t, c)
		got := make([]float64, cfg.Vocab)
		var tokens float64
		for i := range all.Len() {
			n := all.Length(i)
			if n < 3 {
				t.Fatalf("document %d has %d tokens", i, n)
			}
			terms, counts := all.Doc(i)
			for j, w := range terms {
				got[w] += float64(counts[j])
			}
			tokens += float64(n)
		}
		if mean := tokens / float64(all.Len()); math.Abs(mean-20) > 0.2 {
			t.Fatalf("mean length %g, want ≈20", mean)
		}
		var l1 float64
		for w := range got {
			l1 += math.Abs(got[w]/tokens - want[w])
		}
		if l1 > 0.02 {
			t.Fatalf("single=%v: word frequencies off by ℓ1 %g", single, l1)
		}
	}
}

// Under the single-topic model every document's words come from one topic:
// a document never mixes words that only one topic can emit.
func TestSingleTopicDocsHaveOneTopic(t *testing.T) {
	c, err := NewLDA(LDAConfig{Docs: 500, Vocab: 40, K: 3, DocLen: 15, Seed: 3, Single: true})
	if err != nil {
		t.Fatal(err)
	}
	// Make the topics disjoint so the source topic of each word is known.
	for w := 0; w < 40; w++ {
		for i := range 3 {
			c.Truth.Topics[i][w] = 0
			if w%3 == i {
				c.Truth.Topics[i][w] = 3.0 / 40
			}
		}
	}
	for i := range 3 {
		var s float64
		for _, p := range c.Truth.Topics[i] {
			s += p
		}
		for w := range c.Truth.Topics[i] {
			c.Truth.Topics[i][w] /= s
		}
		c.words[i].build(c.Truth.Topics[i])
	}
	all := collect(t, c)
	for d := range all.Len() {
		terms, _ := all.Doc(d)
		for _, w := range terms {
			if w%3 != terms[0]%3 {
				t.Fatalf("document %d mixes topics", d)
			}
		}
	}
}

// α sums to α₀ and is exactly the seed's U(0.5, 1.5) draws scaled (the
// single-topic weights sum to 1); document lengths follow Poisson(DocLen)
// raised to at least 3.
func TestLDAAlphaAndLengths(t *testing.T) {
	for _, single := range []bool{false, true} {
		cfg := LDAConfig{Docs: 20000, Vocab: 30, K: 7, Alpha0: 3.5, DocLen: 2, Seed: 5, Single: single}
		c, err := NewLDA(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := newRand(cfg.Seed, 0)
		u := make([]float64, cfg.K)
		var su, sa float64
		for i := range u {
			u[i] = 0.5 + r.Float64()
			su += u[i]
			sa += c.Truth.Alpha[i]
		}
		total := cfg.Alpha0
		if single {
			total = 1
		}
		if math.Abs(sa-total) > 1e-12 {
			t.Fatalf("single=%v: α sums to %g, want %g", single, sa, total)
		}
		lo, hi := math.Inf(1), 0.0
		for i, a := range c.Truth.Alpha {
			if u[i] < 0.5 || u[i] >= 1.5 || math.Abs(a-u[i]*total/su) > 1e-15 {
				t.Fatalf("α[%d] = %g is not the draw %g scaled by %g/%g", i, a, u[i], total, su)
			}
			lo, hi = min(lo, a), max(hi, a)
		}
		if hi/lo > 3 {
			t.Fatalf("α spans a ratio of %g, more than U(0.5,1.5) allows", hi/lo)
		}

		// Length frequencies against max(Poisson(2), 3): P(3) = P(X ≤ 3).
		all := collect(t, c)
		freq := map[int64]float64{}
		for i := range all.Len() {
			n := all.Length(i)
			if n < 3 {
				t.Fatalf("document %d has %d tokens", i, n)
			}
			freq[n] += 1 / float64(all.Len())
		}
		pois := func(k int) float64 {
			p := math.Exp(-cfg.DocLen)
			for j := 1; j <= k; j++ {
				p *= cfg.DocLen / float64(j)
			}
			return p
		}
		want := map[int64]float64{3: pois(0) + pois(1) + pois(2) + pois(3), 4: pois(4), 5: pois(5)}
		for n, p := range want {
			// Four standard errors of a frequency from 20000 documents.
			if se := math.Sqrt(p * (1 - p) / float64(all.Len())); math.Abs(freq[n]-p) > 4*se {
				t.Errorf("single=%v: P(length %d) = %.4f, want %.4f ± %.4f", single, n, freq[n], p, 4*se)
			}
		}
	}
}

// The truth file holds the model, and records how the documents were
// generated (the models' tests read it as a model, models/all).
func TestTruthRoundTrip(t *testing.T) {
	c, err := NewLDA(LDAConfig{Docs: 10, Vocab: 20, K: 3, DocLen: 5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "truth.json")
	if err := c.WriteTruth(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got TopicTruth
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, c.Truth) {
		t.Fatalf("truth changed in the round trip (%v): %+v", err, got)
	}
	var params struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(b, &params); err != nil || params.Params["seed"] != 2.0 || params.Params["docs"] != 10.0 {
		t.Fatalf("params %v (%v) in %s", params.Params, err, b)
	}
}

func TestLDABadConfig(t *testing.T) {
	for _, cfg := range []LDAConfig{
		{Docs: 10, Vocab: 1, K: 1, DocLen: 5},
		{Docs: 10, Vocab: 10, K: 0, DocLen: 5},
		{Docs: -1, Vocab: 10, K: 2, DocLen: 5},
		{Docs: 10, Vocab: 10, K: 2, DocLen: -5},
	} {
		if _, err := NewLDA(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// Sampler checks: Poisson mean and variance on both branches, tiny Dirichlet
// shapes do not underflow.
func TestSamplers(t *testing.T) {
	r := newRand(1, 1)
	for _, mean := range []float64{4, 200} {
		var s, s2 float64
		const n = 200000
		for range n {
			x := float64(poisson(r, mean))
			s += x
			s2 += x * x
		}
		m := s / n
		v := s2/n - m*m
		if math.Abs(m-mean) > 4*math.Sqrt(mean/n) || math.Abs(v/mean-1) > 0.03 {
			t.Errorf("poisson(%g): mean %g variance %g", mean, m, v)
		}
	}
	p := make([]float64, 100)
	dirichlet(r, p, []float64{0.01})
	var s float64
	for _, x := range p {
		if math.IsNaN(x) {
			t.Fatal("NaN in Dirichlet draw")
		}
		s += x
	}
	if math.Abs(s-1) > 1e-12 {
		t.Fatalf("Dirichlet draw sums to %g", s)
	}
}

func BenchmarkLDAGenerate(b *testing.B) {
	c, err := NewLDA(LDAConfig{Docs: 50000, Vocab: 10000, K: 50, DocLen: 200, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var tokens int64
	b.ResetTimer()
	for b.Loop() {
		for d, err := range c.Docs(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			tokens += d.Tokens()
			d.Release()
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}
