package lda

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// noNNZ hides a source's entry count, as a Parquet or Arrow file does (it
// records its rows, not the length of its list columns).
type noNNZ struct{ stream.DocSource }

func (s noNNZ) Info() stream.Info {
	i := s.DocSource.Info()
	i.NNZ = -1
	return i
}

// materialize draws a corpus into memory, so that its Info knows the
// documents and entries.
func materialize(t testing.TB, cfg synth.LDAConfig) (*stream.MemoryDocs, *models.Model) {
	t.Helper()
	c, truth := corpus(t, cfg)
	all := stream.NewDocs(0)
	for b, err := range c.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len() {
			all.AppendDoc(b.Doc(i))
		}
	}
	return &stream.MemoryDocs{All: all, Terms: cfg.Vocab}, truth
}

// TestPlanSourceEstimatesEntries: a source that knows its documents but not
// its entries gets an estimate from its first documents, so the rows on
// disk (whose disk need depends on it) stay a choice; a source that knows
// neither still gets a plan (with unknown time) but not the rows.
func TestPlanSourceEstimatesEntries(t *testing.T) {
	mem, _ := materialize(t, synth.LDAConfig{Docs: 60000, Vocab: 300, K: 4, Alpha0: 1, DocLen: 40, Seed: 5})
	truth := mem.Info().NNZ
	cfg := Config{K: 4, Alpha0: 1, Workers: 2}
	p, err := PlanSource(context.Background(), noNNZ{mem}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !p.NNZEstimated || math.Abs(float64(p.NNZ-truth)) > 0.02*float64(truth) || p.Docs != 60000 {
		t.Fatalf("estimated %d entries (flag %v) for %d documents; true %d", p.NNZ, p.NNZEstimated, p.Docs, truth)
	}
	for _, c := range p.Options {
		if !c.Fits || c.Seconds < 0 {
			t.Errorf("%s: fits %v (%s), predicted %.3gs", c.Third, c.Fits, c.Why, c.Seconds)
		}
	}
	if !strings.Contains(p.String(), "estimated") {
		t.Errorf("the plan does not say the entries are estimated:\n%s", p)
	}
	// All documents sampled: the count is exact.
	small, _ := materialize(t, synth.LDAConfig{Docs: 500, Vocab: 300, K: 4, Alpha0: 1, DocLen: 40, Seed: 5})
	if p, err = PlanSource(context.Background(), noNNZ{small}, cfg); err != nil || p.NNZEstimated || p.NNZ != small.Info().NNZ {
		t.Errorf("whole source sampled: %d entries (estimated %v), want %d exactly; err %v", p.NNZ, p.NNZEstimated, small.Info().NNZ, err)
	}
	info := mem.Info()
	info.Rows, info.NNZ = -1, -1
	p, err = PlanFit(info, Config{K: 4, Alpha0: 1, Third: Auto})
	if err != nil {
		t.Fatal(err)
	}
	if p.Third != Explicit || p.Options[1].Fits || p.Options[0].Seconds != -1 {
		t.Errorf("unknown documents: chose %s, rows fit %v, explicit time %v", p.Third, p.Options[1].Fits, p.Options[0].Seconds)
	}
}

// TestPlanChoices: the automatic plan keeps the packed tensor while its k³
// memory fits the budget, moves to the rows on disk when it does not, and
// to the sketch only when neither exact representation fits; an explicit
// choice is followed whatever it costs.
func TestPlanChoices(t *testing.T) {
	wiki := stream.Info{Terms: 100000, Rows: 3_500_000, NNZ: 500_000_000}
	small := stream.Info{Terms: 5000, Rows: 200_000, NNZ: 20_000_000}
	cases := []struct {
		info   stream.Info
		k      int
		memory int64
		want   Third
	}{
		{wiki, 10, 2 << 30, Explicit},
		{wiki, 50, 2 << 30, Explicit},
		{wiki, 100, 2 << 30, Explicit},
		// Both fit; RTPM's ≈k·26 contractions of the k³/6 tensor are
		// predicted slower than 25 passes over the rows.
		{small, 300, 2 << 30, Rows},
		{small, 300, 1 << 30, Rows}, // the transform's 4·k³·8 bytes no longer fit
		// Nothing fits: the d×k statistics alone take 1.2 GB at k=300; the
		// smallest is the rows (the sketch of the largest length allowed).
		{wiki, 300, 2 << 30, Rows},
		{wiki, 1000, 1 << 30, Sketch},
	}
	for _, c := range cases {
		info := c.info
		p, err := PlanFit(info, Config{K: c.k, Alpha0: 1, Third: Auto, Memory: c.memory, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("k=%d, budget %s:\n%s", c.k, bytesStr(c.memory), p)
		if p.Third != c.want || !p.Auto {
			t.Errorf("k=%d, budget %s: chose %s (auto %v), want %s\n%s", c.k, bytesStr(c.memory), p.Third, p.Auto, c.want, p)
		}
		if p.Predicted.Third != p.Third || p.Predicted.Seconds <= 0 || p.Predicted.PeakBytes <= 0 {
			t.Errorf("k=%d: prediction %+v for %s", c.k, p.Predicted, p.Third)
		}
	}
	p, err := PlanFit(wiki, Config{K: 1000, Alpha0: 1, Third: Explicit, Memory: 1 << 30})
	if err != nil || p.Third != Explicit || p.Auto || p.Predicted.Fits {
		t.Errorf("forced explicit: %s auto %v fits %v err %v", p.Third, p.Auto, p.Predicted.Fits, err)
	}
}

// TestDefaultSketch: the default sketch aims at a predicted contraction
// error of maxSketchErr (at k=10, 1024×3 did not converge on the 20,000-
// document corpus of the lead's check; 4096×3 did), grows with k, and stays
// within a quarter of the budget.
func TestDefaultSketch(t *testing.T) {
	b, count := DefaultSketch(10, 8<<30)
	if b != 4096 || count != 3 || sketchError(10, b, count) > maxSketchErr {
		t.Errorf("k=10: %d×%d (error %.3g)", b, count, sketchError(10, b, count))
	}
	b50, _ := DefaultSketch(50, 8<<30)
	if b50 <= b {
		t.Errorf("k=50 sketch %d not larger than k=10's %d", b50, b)
	}
	if b, _ := DefaultSketch(1000, 64<<20); int64(sketchLanesMem+3)*3*int64(b)*8 > 64<<20/4*2 {
		t.Errorf("k=1000 within 64 MiB: sketch length %d", b)
	}
}

// TestRepresentations fits one corpus with each representation: the rows
// on disk give the packed tensor's topics to rounding (the solvers differ,
// so compare each to the truth), the default sketch converges with
// comparable accuracy, and the plan is reported through OnPlan.
func TestRepresentations(t *testing.T) {
	cc := synth.LDAConfig{Docs: 10000, Vocab: 400, K: 5, Alpha0: 1, DocLen: 80, Seed: 21}
	var got []*Plan
	res := map[Third]*models.Evaluation{}
	for _, th := range []Third{Explicit, Rows, Sketch} {
		m, ev := fitAndEval(t, cc, Config{K: 5, Alpha0: 1, Seed: 2, Third: th, RowDir: t.TempDir(), OnPlan: func(p *Plan) { got = append(got, p) }})
		t.Logf("%s: mean ℓ1 %.4f, max %.4f, found %d, α err %.3f, %d passes, solver %s", th, ev.MeanL1, ev.MaxL1, ev.Found, ev.AlphaRelErr, m.Fit.Passes, m.Fit.Solver.Name)
		res[th] = ev
		if len(got) != len(res) || got[len(got)-1].Third != th {
			t.Fatalf("%s: OnPlan called %d times for %d fits", th, len(got), len(res))
		}
	}
	ex := res[Explicit]
	if ex.Found != 5 || ex.MeanL1 > 0.1 {
		t.Fatalf("explicit: mean ℓ1 %.4f, found %d", ex.MeanL1, ex.Found)
	}
	if r := res[Rows]; r.Found != 5 || math.Abs(r.MeanL1-ex.MeanL1) > 0.01 {
		t.Errorf("rows on disk: mean ℓ1 %.4f vs explicit %.4f, found %d", r.MeanL1, ex.MeanL1, r.Found)
	}
	if s := res[Sketch]; s.Found != 5 || s.MeanL1 > 2*ex.MeanL1 {
		t.Errorf("default sketch: mean ℓ1 %.4f vs explicit %.4f, found %d", s.MeanL1, ex.MeanL1, s.Found)
	}
}

// TestSketchTooCoarse: a sketch too small for k fails with advice to raise
// --sketch-len, not with "k is larger than the data support".
func TestSketchTooCoarse(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 8, Alpha0: 1, DocLen: 80, Seed: 22})
	_, err := Fit(context.Background(), src, Config{K: 8, Alpha0: 1, Seed: 2, Third: Sketch, SketchLen: 16, SketchCount: 1})
	if err == nil || !strings.Contains(err.Error(), "--sketch-len") {
		t.Fatalf("16×1 sketch at k=8: err %v, want advice to raise --sketch-len", err)
	}
}
