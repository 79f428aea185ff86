package gmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// memory holds the generated rows in memory, batches of batch rows.
func memory(t *testing.T, gen synth.GMMConfig, batch int) (*stream.MemoryDense, *gmm.Model) {
	t.Helper()
	src, err := synth.NewGMM(gen)
	if err != nil {
		t.Fatal(err)
	}
	all, err := stream.CollectDense(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return &stream.MemoryDense{All: all, BatchRows: batch}, gmm.TruthOf(src)
}

// The log-likelihood of the passes never decreases: from the moment fit
// and from a start at sample rows alone, spherical and diagonal.
func TestEMLikelihoodNeverDecreases(t *testing.T) {
	ctx := context.Background()
	src, _ := memory(t, synth.GMMConfig{Rows: 6000, D: 6, K: 4, Seed: 11, Differing: true, BatchRows: 500}, 500)
	mom, err := gmm.Fit(ctx, src, gmm.Config{K: 4, Differing: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		start *gmm.Model
		diag  bool
	}{{"moments", mom, false}, {"moments-diag", mom, true}, {"rows", nil, false}, {"rows-diag", nil, true}} {
		t.Run(c.name, func(t *testing.T) {
			// No EM on a sample first: the passes start from the start.
			cfg := gmm.EMConfig{Passes: 40, Tol: -1, Diag: c.diag, Seed: 3, SampleRows: -1}
			st, err := gmm.Start(ctx, src, c.start, 4, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, err := gmm.Refine(ctx, src, st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ll := m.EM.LogLik
			if len(ll) != 40 {
				t.Fatalf("%d passes, want 40 (Tol < 0 never stops)", len(ll))
			}
			for i := 1; i < len(ll); i++ {
				// EM's M step maximises the expected complete
				// likelihood; only rounding of sums of 6000 rows can
				// make a pass look lower.
				if ll[i] < ll[i-1]-1e-10*math.Abs(ll[i-1]) {
					t.Fatalf("pass %d: log-likelihood %.12f after %.12f", i+1, ll[i], ll[i-1])
				}
			}
			if !(ll[len(ll)-1] > ll[0]) {
				t.Fatalf("no gain: %v", ll)
			}
			t.Logf("%s: %.4f → %.4f", c.name, ll[0], ll[len(ll)-1])
		})
	}
}

// The moment start refined by EM recovers the generated parameters at
// least as well as the moment fit alone, on samples small enough for the
// moment fit to be visibly off.
func TestEMRecoversAtLeastAsWell(t *testing.T) {
	ctx := context.Background()
	for _, gen := range []synth.GMMConfig{
		{Rows: 3000, D: 10, K: 4, Seed: 21},
		{Rows: 3000, D: 10, K: 3, Seed: 22, Differing: true},
		{Rows: 5000, D: 20, K: 5, Seed: 23},
	} {
		src, truth := memory(t, gen, 400)
		mom, err := gmm.Fit(ctx, src, gmm.Config{K: gen.K, Differing: gen.Differing, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		cfg := gmm.EMConfig{Seed: 1}
		st, err := gmm.Start(ctx, src, mom, gen.K, cfg)
		if err != nil {
			t.Fatal(err)
		}
		em, err := gmm.Refine(ctx, src, st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		before, err := gmm.Eval(mom, truth)
		if err != nil {
			t.Fatal(err)
		}
		after, err := gmm.Eval(em.Spherical(), truth)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: means %.4f → %.4f, weights %.4f → %.4f, variances %.4f → %.4f in %d passes", gen.Seed,
			before.Means, after.Means, before.Weights, after.Weights, before.Variances, after.Variances, em.EM.Passes)
		if after.Means > before.Means || after.Weights > before.Weights+0.01 {
			t.Errorf("seed %d: EM left the means error %.4f (moments %.4f), weights %.4f (%.4f)", gen.Seed, after.Means, before.Means, after.Weights, before.Weights)
		}
	}
}

// The model is the same, byte for byte, whatever the number of workers
// (the sample of Start is over 4,096 rows, so its passes in memory also
// split their batches among the workers).
func TestEMSameAcrossWorkers(t *testing.T) {
	ctx := context.Background()
	src, _ := memory(t, synth.GMMConfig{Rows: 12000, D: 5, K: 3, Seed: 31, Differing: true}, 256)
	first := map[bool][]byte{}
	for _, w := range []int{1, 2, 4} {
		for _, diag := range []bool{false, true} {
			cfg := gmm.EMConfig{Passes: 8, Diag: diag, Workers: w, Seed: 5, SampleRows: 9000}
			st, err := gmm.Start(ctx, src, nil, 3, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, err := gmm.Refine(ctx, src, st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(m)
			if first[diag] == nil {
				first[diag] = b
			} else if !bytes.Equal(b, first[diag]) {
				t.Fatalf("diag %v, %d workers: another model\n%s\n%s", diag, w, b, first[diag])
			}
		}
	}
}

// The statistics of a pass over two shards merge into those of the pass
// over all the rows, bit for bit, and survive a statistics file.
func TestEMStatsMerge(t *testing.T) {
	ctx := context.Background()
	src, _ := memory(t, synth.GMMConfig{Rows: 3000, D: 4, K: 3, Seed: 41}, 300)
	for _, diag := range []bool{false, true} {
		st, err := gmm.Start(ctx, src, nil, 3, gmm.EMConfig{Diag: diag, Seed: 2, SampleRows: -1})
		if err != nil {
			t.Fatal(err)
		}
		pass := gmm.EMPass(st, 1e-6, 1, "")
		whole, err := pass.Run(ctx, src.Rows, 2)
		if err != nil {
			t.Fatal(err)
		}
		cut := 1200 // a batch boundary
		half := func(lo, hi int) *stream.MemoryDense {
			all := src.All
			return &stream.MemoryDense{BatchRows: 300, All: &stream.Dense{Start: int64(lo), Rows: hi - lo, Cols: all.Cols, Data: all.Data[lo*all.Cols : hi*all.Cols]}}
		}
		a, err := pass.Run(ctx, half(0, cut).Rows, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pass.Run(ctx, half(cut, 3000).Rows, 3)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := b.Encode(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		b2, err := implicit.DecodeDenseStats(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Merge(b2); err != nil {
			t.Fatal(err)
		}
		if a.Rows != whole.Rows {
			t.Fatalf("%d rows merged, %d in the whole", a.Rows, whole.Rows)
		}
		for _, name := range []string{"n", "sx", "sxx", "ll"} {
			x, y := a.Sum(name), whole.Sum(name)
			for i := range y {
				if x[i] != y[i] {
					t.Fatalf("diag %v: %s[%d]: merged %v, whole %v", diag, name, i, x[i], y[i])
				}
			}
		}
	}
}

// A moment fit that is not a density (a negative variance, a zero
// weight) is repaired, not refused: its other components are kept and the
// missing ones start at sample rows; so is a k beyond what the moments
// give.
func TestStartRepairs(t *testing.T) {
	ctx := context.Background()
	src, _ := memory(t, synth.GMMConfig{Rows: 500, D: 3, K: 2, Seed: 51}, 100)
	bad := &gmm.Model{Model: "gmm", K: 3, D: 3,
		Weights:   []float64{0.5, 0, 0.5},
		Means:     [][]float64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}},
		Variances: []float64{2, 1, -3}}
	m, err := gmm.Start(ctx, src, bad, 5, gmm.EMConfig{Seed: 1, SampleRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m.K != 5 || len(m.Means) != 5 || m.EM.Started != "1 of 5 components from the moment fit, 4 at sample rows" {
		t.Fatalf("start %+v", m)
	}
	if m.Means[0][0] != 1 || m.Variances[0][0] < 2 {
		t.Fatalf("the valid component was not kept: %v %v", m.Means[0], m.Variances[0])
	}
	var sum float64
	for i, w := range m.Weights {
		sum += w
		if !(w > 0) || !(m.Variances[i][0] > 0) {
			t.Fatalf("component %d: weight %v variance %v", i, w, m.Variances[i])
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("weights sum to %v", sum)
	}
	// The rows started from are rows of the data.
	rows := map[[3]float64]bool{}
	for i := range src.All.Rows {
		r := src.All.Row(i)
		rows[[3]float64{r[0], r[1], r[2]}] = true
	}
	for _, mu := range m.Means[1:] {
		if !rows[[3]float64{mu[0], mu[1], mu[2]}] {
			t.Fatalf("mean %v is not a row", mu)
		}
	}
}

// The moments' variances, too small for real clusters, are raised to the
// rows' mean squared distance to the nearest mean: with the true means
// that is about the true variance.
func TestStartWidens(t *testing.T) {
	ctx := context.Background()
	src, truth := memory(t, synth.GMMConfig{Rows: 4000, D: 6, K: 3, Seed: 61}, 500)
	narrow := *truth
	narrow.Variances = []float64{1e-9, 1e-9, 1e-9}
	// k=4: one component more than the moments give, so Start reads its
	// sample of rows (and, SampleRows < 0, runs no EM on it).
	m, err := gmm.Start(ctx, src, &narrow, 4, gmm.EMConfig{Seed: 1, SampleRows: -1, Diag: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, vs := range m.Variances[:3] {
		for _, v := range vs {
			// The nearest mean is sometimes not a row's own: the
			// figure is a little below σ², and never near 1e-9.
			if v < 0.7*truth.Variances[i] || v > 1.3*truth.Variances[i] {
				t.Fatalf("component %d: start variance %v, truth %v", i, v, truth.Variances[i])
			}
		}
	}
}

// Of several starts Start keeps the one of the highest likelihood on the
// sample once each has run EM until a pass gains less than 10·Tol, and
// runs it on to Tol: it ends at least as likely as every start at that
// point (each alone, Starts 1 with its seed and Tol 10·Tol, is the same
// start run as far), and its last pass gains less than Tol.
func TestStartBestOfStarts(t *testing.T) {
	ctx := context.Background()
	src, _ := memory(t, synth.GMMConfig{Rows: 3000, D: 2, K: 6, Seed: 71, Sep: 3}, 500)
	start := func(seed uint64, starts int, tol float64) *gmm.Mixture {
		m, err := gmm.Start(ctx, src, nil, 6, gmm.EMConfig{Seed: seed, Starts: starts, SampleRows: 3000, Tol: tol})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	last := func(m *gmm.Mixture) float64 { return m.EM.LogLik[len(m.EM.LogLik)-1] }
	best := start(4, 4, 1e-3)
	ll := best.EM.LogLik
	if n := len(ll); n < 2 || ll[n-1]-ll[n-2] >= 1e-3 || !best.EM.Converged {
		t.Fatalf("the kept start did not run on to Tol: %v", ll)
	}
	var top float64
	for i := range 4 {
		each := last(start(4+uint64(i), 1, 1e-2))
		t.Logf("start %d at 10·Tol: %.6f", i, each)
		if i == 0 || each > top {
			top = each
		}
	}
	t.Logf("sample log-likelihood: best of four %.6f, the likeliest at 10·Tol %.6f", last(best), top)
	if last(best) < top {
		t.Fatalf("best of four starts %.6f < the likeliest start at 10·Tol %.6f", last(best), top)
	}
}

// When the moments give every component, a start of every component at
// sample rows competes with the moment start: from a moment fit whose
// three means coincide (EM cannot separate them) the kept start is the
// one from the rows, and it is likelier on the sample than the moment
// start alone (Starts 1).
func TestStartMomentsCompete(t *testing.T) {
	ctx := context.Background()
	src, truth := memory(t, synth.GMMConfig{Rows: 3000, D: 4, K: 3, Seed: 81, Sep: 4}, 500)
	stuck := &gmm.Model{Model: "gmm", K: 3, D: 4, Weights: []float64{1. / 3, 1. / 3, 1. / 3},
		Means: [][]float64{truth.Means[0], truth.Means[0], truth.Means[0]}, Variances: []float64{1, 1, 1}}
	last := func(starts int) *gmm.Mixture {
		m, err := gmm.Start(ctx, src, stuck, 3, gmm.EMConfig{Seed: 2, Starts: starts, SampleRows: 3000})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	alone, both := last(1), last(0)
	a, b := alone.EM.LogLik[len(alone.EM.LogLik)-1], both.EM.LogLik[len(both.EM.LogLik)-1]
	t.Logf("sample log-likelihood: moment start %.4f, best of two %.4f (%s)", a, b, both.EM.Started)
	if !strings.HasPrefix(both.EM.Started, "0 of 3 components from the moment fit, 3 at sample rows") || !strings.HasPrefix(alone.EM.Started, "3 of 3 components from the moment fit") {
		t.Fatalf("starts kept: %q alone, %q of two", alone.EM.Started, both.EM.Started)
	}
	if !(b > a+0.1) {
		t.Fatalf("best of two %.4f not above the stuck moment start %.4f", b, a)
	}
}
