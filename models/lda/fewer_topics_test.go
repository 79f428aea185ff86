package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// TestSplitTopics brings a model of 3 topics to 7: the heaviest is split
// each time, the weights keep their sum, every topic is a distribution,
// the halves of a split differ but average to their parent, and the
// per-topic diagnostics follow; the same seed splits alike.
func TestSplitTopics(t *testing.T) {
	make3 := func() *models.Model {
		m := &models.Model{K: 3, D: 4, Alpha: []float64{0.5, 0.3, 0.2},
			Topics: [][]float64{{0.4, 0.3, 0.2, 0.1}, {0.25, 0.25, 0.25, 0.25}, {0.7, 0.1, 0.1, 0.1}}, Fit: &models.FitStats{}}
		m.Fit.Solver.Eigenvalues = []float64{1, 2, 3}
		m.Fit.ProjectionL1 = []float64{0.1, 0.2, 0.3}
		return m
	}
	m := make3()
	parent := append([]float64(nil), m.Topics[0]...)
	splitTopics(m, 7, 9)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.K != 7 || len(m.Fit.Solver.Eigenvalues) != 7 || len(m.Fit.ProjectionL1) != 7 {
		t.Fatalf("k=%d, %d eigenvalues, %d projection masses", m.K, len(m.Fit.Solver.Eigenvalues), len(m.Fit.ProjectionL1))
	}
	sum := 0.0
	for _, a := range m.Alpha {
		sum += a
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("weights sum to %g after the splits, 1 before", sum)
	}
	// Halving the heaviest each time: 0.5 → 2 × 0.25, 0.3 → 2 × 0.15,
	// then each 0.25 → 2 × 0.125.
	got := slices.Clone(m.Alpha)
	slices.Sort(got)
	if want := []float64{0.125, 0.125, 0.125, 0.125, 0.15, 0.15, 0.2}; !slices.Equal(got, want) {
		t.Errorf("weights %v, want %v", m.Alpha, want)
	}
	for i := range m.K {
		for j := range i {
			if slices.Equal(m.Topics[i], m.Topics[j]) {
				t.Errorf("topics %d and %d are the same", j, i)
			}
		}
	}
	if slices.Equal(m.Topics[0], parent) {
		t.Error("a split topic equals its parent")
	}
	again := make3()
	splitTopics(again, 7, 9)
	if fmt.Sprint(again.Topics) != fmt.Sprint(m.Topics) {
		t.Error("the same seed split differently")
	}
}

// TestSupportedTopics reads the topics a refusal says the data support.
func TestSupportedTopics(t *testing.T) {
	for _, c := range []struct {
		err  error
		k    int
		want int
	}{
		{&fewPositiveError{pos: 37, cols: 60, k: 50}, 50, 37},
		{&fewPositiveError{pos: 60, cols: 60, k: 50}, 50, 49},
		{&negativeError{bad: 1, k: 50}, 50, 49},
		{&negativeError{bad: 12, k: 50}, 50, 38},
		{fmt.Errorf("lda: %w: the whitened third moment has fewer than k=50 positive eigenvalues", ErrTooManyTopics), 50, 40},
		{fmt.Errorf("lda: %w", ErrTooManyTopics), 3, 2},
	} {
		if !errors.Is(c.err, ErrTooManyTopics) {
			t.Fatalf("%v is not ErrTooManyTopics", c.err)
		}
		if got := supportedTopics(c.err, c.k); got != c.want {
			t.Errorf("%v at k=%d: %d topics, want %d", c.err, c.k, got, c.want)
		}
	}
}

// TestFewerTopics fits k=25 topics to documents whose words are drawn
// independently of each other (no topic structure: the corrected second
// moment is small noise around a rank-one matrix, and only some of its 30
// directions are positive), which the spectral fit alone refuses. Fit
// answers with the topics the data support, split to 25, a warning saying
// so, and the EM passes after them; the same model whatever the workers.
func TestFewerTopics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d = 30
	b := &stream.Docs{Offsets: []int{0}}
	for range 20000 {
		cnt := map[int32]int32{}
		for range 8 {
			cnt[int32(float64(d)*r.Float64()*r.Float64())]++
		}
		for w := int32(0); w < d; w++ {
			if c := cnt[w]; c > 0 {
				b.Add(w, c)
			}
		}
		b.EndDoc()
	}
	src := &stream.MemoryDocs{All: b, Terms: d, BatchRows: 1000}
	cfg := Config{K: 25, Alpha0: 1, Seed: 1, Workers: 2, EM: EM{Passes: 3, FitAlpha: true}}
	spectral := cfg
	spectral.EM = EM{}
	plan, track := mustPlan(t, src, spectral)
	if _, err := spectralFit(context.Background(), src, plan.apply(spectral), plan, track); !errors.Is(err, ErrTooManyTopics) {
		t.Fatalf("the spectral fit of 25 topics: %v, want ErrTooManyTopics", err)
	}
	var ref *models.Model
	for _, workers := range []int{1, 2} {
		cfg.Workers = workers
		m, err := Fit(context.Background(), src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		w := m.Fit.Warnings[len(m.Fit.Warnings)-1]
		var n int
		if _, err := fmt.Sscanf(w, "the data support %d spectral topics, not k=25", &n); err != nil || n < 1 || n >= 25 {
			t.Fatalf("%d workers: warning %q", workers, w)
		}
		if m.K != 25 || m.Fit.EM == nil || m.Fit.EM.Passes < 1 {
			t.Fatalf("%d workers: k=%d, EM %+v", workers, m.K, m.Fit.EM)
		}
		m.Fit.Seconds = 0
		if ref == nil {
			ref = m
			t.Logf("%s; EM bounds %.5v", w, m.Fit.EM.Bounds)
			continue
		}
		if fmt.Sprint(m.Topics, m.Alpha) != fmt.Sprint(ref.Topics, ref.Alpha) {
			t.Error("the model differs between 1 and 2 workers")
		}
	}
}

// mustPlan is the plan of cfg over src with a fresh tracker, as Fit makes
// them.
func mustPlan(t *testing.T, src stream.DocSource, cfg Config) (*Plan, *tracker) {
	t.Helper()
	c, err := cfg.withDefaults(src.Info().Terms)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFit(src.Info(), c)
	if err != nil {
		t.Fatal(err)
	}
	return p, newTracker(p.apply(c))
}
