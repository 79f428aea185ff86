package lda

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
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
		if !c.Fits || c.CPUSeconds < 0 {
			t.Errorf("%s: fits %v (%s), predicted %.3gs", c.Third, c.Fits, c.Why, c.CPUSeconds)
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
	if s := p.String(); !strings.Contains(s, "CPU unknown, peak") {
		t.Errorf("unknown documents: the plan does not say the time is unknown:\n%s", s)
	}
	if p.Third != Explicit || p.Options[1].Fits || p.Options[0].CPUSeconds != -1 {
		t.Errorf("unknown documents: chose %s, rows fit %v, explicit time %v", p.Third, p.Options[1].Fits, p.Options[0].CPUSeconds)
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
		// Both fit; RTPM's ≈15·k block contractions of the k³/6 tensor are
		// predicted slower than 25 passes over the rows.
		{small, 300, 2 << 30, Rows},
		{small, 300, 1 << 30, Rows}, // the explicit fits too, and is still predicted slower
		// Nothing fits: the d×k statistics alone take 1.2 GB at k=300
		// (1.9 GB of RSS); the smallest is then the rows (2.4 GiB: their
		// contractions take the W terms a block of words at a time, not
		// as four d×L arrays) before the sketch (3.0 GiB).
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
		if p.Predicted.Third != p.Third || p.Predicted.CPUSeconds <= 0 || p.Predicted.PeakBytes <= 0 {
			t.Errorf("k=%d: prediction %+v for %s", c.k, p.Predicted, p.Third)
		}
	}
	p, err := PlanFit(wiki, Config{K: 1000, Alpha0: 1, Third: Explicit, Memory: 1 << 30})
	if err != nil || p.Third != Explicit || p.Auto || p.Predicted.Fits {
		t.Errorf("forced explicit: %s auto %v fits %v err %v", p.Third, p.Auto, p.Predicted.Fits, err)
	}
}

// TestDefaultSketch: the default sketch aims at a predicted contraction
// error of maxSketchErr (at k=10, 1024×3 did not converge on a 20,000-
// document corpus; 4096×3 did), grows with k, and stays
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
		var solve []Progress
		m, ev := fitAndEval(t, cc, Config{K: 5, Alpha0: 1, Seed: 2, Third: th, RowDir: t.TempDir(), OnPlan: func(p *Plan) { got = append(got, p) },
			Progress: func(p Progress) {
				if p.Stage == "solve" {
					solve = append(solve, p)
				}
			}})
		t.Logf("%s: mean ℓ1 %.4f, max %.4f, found %d, α err %.3f, %d passes, solver %s, %d solve reports", th, ev.MeanL1, ev.MaxL1, ev.Found, ev.AlphaRelErr, m.Fit.Passes, m.Fit.Solver.Name, len(solve))
		checkSolveProgress(t, th, solve, m.Fit.Passes, int64(cc.Docs))
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

// checkSolveProgress checks the solve's reports of one fit: none for the
// packed tensor; otherwise contractions numbered 1, 2, … each begun (0 rows
// read) and ended (Done, every row read over rows on disk), and over rows
// the reads in between (at least one per contraction) growing to the
// store's rows.
func checkSolveProgress(t *testing.T, th Third, solve []Progress, passes int, docs int64) {
	t.Helper()
	if th == Explicit {
		if len(solve) != 0 {
			t.Errorf("explicit: %d solve reports, want none", len(solve))
		}
		return
	}
	var rows int64
	if th == Rows {
		rows = docs
	}
	n, read := 0, int64(0)
	for i, p := range solve {
		switch {
		case p.Pass != passes || p.Rows != rows:
			t.Fatalf("%s: report %d %+v: want pass %d, %d rows", th, i, p, passes, rows)
		case p.Contraction == n+1 && p.Docs == 0 && !p.Done:
			n, read = n+1, 0 // a contraction begins
		case p.Contraction != n || p.Docs < read || p.Docs > rows || p.Done && p.Docs != rows:
			t.Fatalf("%s: report %d %+v after contraction %d at %d rows", th, i, p, n, read)
		}
		read = p.Docs
	}
	if th == Rows && len(solve) < 3*n {
		t.Errorf("%s: %d reports for %d contractions: the chunks read are not reported", th, len(solve), n)
	}
	if n < 2 || !solve[len(solve)-1].Done {
		t.Errorf("%s: %d contractions reported, the last ended %v", th, n, len(solve) > 0 && solve[len(solve)-1].Done)
	}
}

// TestSketchTooCoarse: a sketch too small for k fails with advice to raise
// SketchLen, not with "k is larger than the data support".
func TestSketchTooCoarse(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 400, K: 8, Alpha0: 1, DocLen: 80, Seed: 22})
	_, err := Fit(context.Background(), src, Config{K: 8, Alpha0: 1, Seed: 2, Third: Sketch, SketchLen: 16, SketchCount: 1})
	if err == nil || !strings.Contains(err.Error(), "raise SketchLen to ") || strings.Contains(err.Error(), "--") {
		t.Fatalf("16×1 sketch at k=8: err %v, want advice to raise SketchLen (and no CLI flag)", err)
	}
}

// TestPlanPowerPass: where Fit may add the automatic power pass (default
// PowerIters, a randomized whitening with extra columns), every option says
// so and prices it; where it cannot (exact whitening, PowerIters set, no
// extra columns) none does; Revise turns the prediction into the three-pass
// one only when the fit took that pass.
func TestPlanPowerPass(t *testing.T) {
	info := stream.Info{Terms: 100000, Rows: 1_000_000, NNZ: 150_000_000}
	p, err := PlanFit(info, Config{K: 100, Alpha0: 1, Third: Auto, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Options {
		if !c.PowerPass || c.Passes != 2 || !(c.CPUSecondsPower > c.CPUSeconds) || c.CPUSeconds <= 0 {
			t.Errorf("%s: power pass %v, passes %d, CPU %.3g s, with the power pass %.3g s", c.Third, c.PowerPass, c.Passes, c.CPUSeconds, c.CPUSecondsPower)
		}
	}
	if s := p.String(); !strings.Contains(s, "passes 2 (+1 if the first sketch does not decay)") || !strings.Contains(s, "with the power pass") {
		t.Errorf("the plan does not mention the possible power pass:\n%s", s)
	}
	if p.Revise(2) != nil {
		t.Error("Revise(2) of a two-pass prediction revised it")
	}
	r := p.Revise(3)
	if r == nil || !r.Revised || r.Predicted.Passes != 3 || r.Predicted.PowerPass || r.Predicted.CPUSeconds != p.Predicted.CPUSecondsPower || r.Third != p.Third {
		t.Fatalf("Revise(3): %+v", r)
	}
	if s := r.String(); strings.Contains(s, "\n") || !strings.Contains(s, "passes 3 ") || !strings.Contains(s, "power pass") {
		t.Errorf("revised plan: %q", s)
	}
	if p.Predicted.PowerPass != true || p.Options[0].PowerPass != true {
		t.Error("Revise changed the plan it revised")
	}
	// The pass costs one pass over the entries plus the gathers of its
	// k+oversample sketch columns, less than a third of the fit.
	if extra := p.Predicted.CPUSecondsPower - p.Predicted.CPUSeconds; extra > p.Predicted.CPUSeconds/2 {
		t.Errorf("power pass predicted at %.3g s of a %.3g s fit", extra, p.Predicted.CPUSeconds)
	}
	// Unknown documents: the passes still say +1, the time is unknown.
	unknown, err := PlanFit(stream.Info{Terms: 100000, Rows: -1, NNZ: -1}, Config{K: 100, Alpha0: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := unknown.String(); !strings.Contains(s, "(+1 if the first sketch does not decay) + ") || !strings.Contains(s, "contractions, CPU unknown, peak") || strings.Contains(s, "with the power pass") {
		t.Errorf("unknown documents:\n%s", s)
	}
	for name, cfg := range map[string]Config{
		"power-iters -1": {K: 100, Alpha0: 1, PowerIters: -1},
		"power-iters 1":  {K: 100, Alpha0: 1, PowerIters: 1},
		"no oversample":  {K: 100, Alpha0: 1, Oversample: -1},
		"exact":          {K: 100, Alpha0: 1, ExactDim: 200000},
	} {
		p, err := PlanFit(info, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if cfg.PowerIters == 1 {
			want = 3
		}
		if c := p.Predicted; c.PowerPass || c.Passes != want || c.CPUSecondsPower != 0 || p.Revise(want+1) != nil {
			t.Errorf("%s: power pass %v, passes %d (want %d), with the power pass %.3g s", name, c.PowerPass, c.Passes, want, c.CPUSecondsPower)
		}
		if strings.Contains(p.String(), "+1 if") {
			t.Errorf("%s: the plan mentions a power pass:\n%s", name, p)
		}
	}
}

// TestFitRevisesPlan: when the first sketch does not decay (here topics
// drawn from Dirichlet(1), so the k-th eigenvalue of M2 is close to the
// noise, and 2 extra columns), Fit takes the power pass and reports the
// revised prediction through OnPlan before the third-moment pass; the
// revision counts the passes the fit took. With the power pass turned off
// there is no revision.
func TestFitRevisesPlan(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 2000, K: 10, Alpha0: 1, DocLen: 50, Beta: 1, Seed: 3})
	for _, power := range []int{0, -1} {
		var got []*Plan
		m, err := Fit(context.Background(), src, Config{K: 10, Alpha0: 1, Seed: 1, Oversample: 2, PowerIters: power, OnPlan: func(p *Plan) { got = append(got, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Revised || got[0].Predicted.Passes != 2 || got[0].Predicted.PowerPass != (power == 0) {
			t.Fatalf("power-iters %d: first plan %+v", power, got)
		}
		want := 1
		if power == 0 {
			want = 2
		}
		if len(got) != want {
			t.Fatalf("power-iters %d: %d plans reported, want %d (passes %d, tail %.3f)", power, len(got), want, m.Fit.Passes, m.Fit.SketchTail)
		}
		if r := got[len(got)-1]; r.Predicted.Passes != m.Fit.Passes {
			t.Errorf("power-iters %d: plan predicts %d passes, the fit took %d", power, r.Predicted.Passes, m.Fit.Passes)
		}
		if power == 0 && (!got[1].Revised || got[1].Predicted.CPUSeconds != got[0].Predicted.CPUSecondsPower) {
			t.Errorf("revision %+v of %+v", got[1], got[0])
		}
	}
}

// TestPlanPredictions prints, for bench/lda/SCALE.md, the plan's prediction
// for the files in $STREAMFIT_PLAN_FILES (comma-separated FILE:K entries;
// skipped when unset): one TSV line per file and representation with the
// documents, entries, passes, CPU seconds (and with the power pass), peak
// and contractions. bench/lda/scale.sh predict runs it.
func TestPlanPredictions(t *testing.T) {
	list := os.Getenv("STREAMFIT_PLAN_FILES")
	if list == "" {
		t.Skip("STREAMFIT_PLAN_FILES not set")
	}
	for _, e := range strings.Split(list, ",") {
		file, ks, _ := strings.Cut(e, ":")
		k, err := strconv.Atoi(ks)
		if err != nil {
			t.Fatalf("%q: want FILE:K", e)
		}
		src, err := stream.Open(file, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanSource(context.Background(), src, Config{K: k, Alpha0: 1, Workers: 2, Third: Auto})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Options {
			fmt.Printf("PLAN\t%s\t%d\t%s\t%v\t%d\t%d\t%d\t%v\t%.2f\t%.2f\t%.0f\t%d\n", file, k, c.Third, c.Third == p.Third,
				p.Docs, p.NNZ, c.Passes, c.PowerPass, c.CPUSeconds, c.CPUSecondsPower, float64(c.PeakBytes)/(1<<20), c.Contractions)
		}
	}
}

// TestSketchAdvice: a too-coarse sketch is told the length that reaches the
// default error when one exists (a power of two, within the largest), and
// the exact representations when none does (k=1000).
func TestSketchAdvice(t *testing.T) {
	a := sketchAdvice(8, 1)
	if !strings.Contains(a, "raise SketchLen to ") {
		t.Fatalf("k=8: %q", a)
	}
	var b int
	fmt.Sscanf(a[strings.Index(a, "to ")+3:], "%d", &b)
	if b&(b-1) != 0 || sketchError(8, b, 1) > maxSketchErr || sketchError(8, b/2, 1) <= maxSketchErr {
		t.Errorf("k=8: advised length %d (error %.3g; half of it %.3g)", b, sketchError(8, b, 1), sketchError(8, b/2, 1))
	}
	if a := sketchAdvice(1000, 3); !strings.Contains(a, "beyond the largest") || !strings.Contains(a, `Third "implicit"`) {
		t.Errorf("k=1000: %q", a)
	}
}

// TestPlanCountsEM: the EM passes' d·k arrays (EM's topics, the expected
// counts, their exact totals' low words, and each worker's counts of a
// piece) are in the predicted peak when they outweigh
// the spectral fit's, and only when EM runs.
func TestPlanCountsEM(t *testing.T) {
	info := stream.Info{Terms: 100000, Rows: 200_000, NNZ: 20_000_000}
	peak := func(passes, workers int) int64 {
		p, err := PlanFit(info, Config{K: 100, Alpha0: 1, Third: Explicit, Workers: workers, EM: EM{Passes: passes}})
		if err != nil {
			t.Fatal(err)
		}
		return p.Predicted.PeakBytes
	}
	dk := float64(info.Terms * 100 * 8)
	for _, w := range []int{1, 2, 8} {
		spectral, withEM := peak(0, w), peak(5, w)
		em := gcSlack * (emArrays + float64(w)) * dk
		if float64(withEM) < em {
			t.Errorf("workers %d: predicted peak %s with EM, below EM's own arrays (%s)", w, bytesStr(withEM), bytesStr(int64(em)))
		}
		if withEM < spectral {
			t.Errorf("workers %d: EM lowered the predicted peak: %s against %s", w, bytesStr(withEM), bytesStr(spectral))
		}
		if w == 8 && withEM == spectral {
			t.Errorf("workers 8: EM's %s of arrays left the predicted peak at the spectral fit's %s", bytesStr(int64(em)), bytesStr(spectral))
		}
	}
}

// TestPlanCPUScale: the machine's CPU scale multiplies every predicted CPU
// time (the forecast, the power pass, the EM passes, the passes taken) and
// leaves the choice, its reason and the memory alone.
func TestPlanCPUScale(t *testing.T) {
	defer func(f func() float64) { machineCPU = f }(machineCPU)
	info := stream.Info{Terms: 50000, Rows: 2_000_000, NNZ: 60_000_000}
	plan := func(f float64, k int) *Plan {
		machineCPU = func() float64 { return f }
		p, err := planFit(info, 80_000_000, Config{K: k, Alpha0: 1, Third: Auto, Memory: 2 << 30, Workers: 2, EM: EM{Passes: 10}})
		if err != nil {
			t.Fatal(err)
		}
		return p.atMachineSpeed()
	}
	m := &models.Model{Fit: &models.FitRecord{Passes: 7, EM: &models.EMRecord{Passes: 4, Sample: &models.EMSample{Passes: 3, HalfPasses: 2}}}}
	for _, k := range []int{50, 300} {
		one, two := plan(1, k), plan(2.5, k)
		if one.CPUScale != 1 || two.CPUScale != 2.5 || one.Third != two.Third || one.Reason != two.Reason {
			t.Errorf("k=%d: scale 1 chose %s (%s), scale 2.5 %s (%s)", k, one.Third, one.Reason, two.Third, two.Reason)
		}
		for i := range one.Options {
			a, b := one.Options[i], two.Options[i]
			near := func(x, y float64) bool { return math.Abs(2.5*x-y) <= 1e-9*y }
			if !near(a.CPUSeconds, b.CPUSeconds) || !near(a.CPUSecondsPower, b.CPUSecondsPower) || !near(a.EM.Seconds(3, 2, 1), b.EM.Seconds(3, 2, 1)) || a.PeakBytes != b.PeakBytes {
				t.Errorf("k=%d %s: CPU %.4g → %.4g, power %.4g → %.4g, EM %.4g → %.4g, peak %d → %d", k, a.Third,
					a.CPUSeconds, b.CPUSeconds, a.CPUSecondsPower, b.CPUSecondsPower, a.EM.Seconds(3, 2, 1), b.EM.Seconds(3, 2, 1), a.PeakBytes, b.PeakBytes)
			}
		}
		if x, y := one.Taken(m), two.Taken(m); math.Abs(2.5*x-y) > 1e-9*y || x <= 0 {
			t.Errorf("k=%d: passes taken %.4g s at scale 1, %.4g at 2.5", k, x, y)
		}
		if !strings.Contains(two.String(), "2.5× the cost model's reference machine") || strings.Contains(one.String(), "reference machine") {
			t.Errorf("k=%d: the plan's text does not state the scale:\n%s\n%s", k, one, two)
		}
	}
}

// TestPlanVersus: the closing line puts the CPU used beside the forecast
// and the passes taken, the peak memory beside the predicted peak when the
// platform tells it, and says when the plan could not forecast.
func TestPlanVersus(t *testing.T) {
	p, err := PlanFit(stream.Info{Terms: 5000, Rows: 200_000, NNZ: 20_000_000}, Config{K: 20, Alpha0: 1, Third: Explicit, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := &models.Model{Fit: &models.FitRecord{Passes: 2}}
	got := p.Versus(m, 10, 300<<20)
	want := fmt.Sprintf("CPU 10.0s; the plan forecast %.1fs, and %.1fs for the passes taken (%.2f× the CPU used); peak memory 300.0MiB, the plan's %s",
		p.Predicted.CPUSeconds, p.Taken(m), p.Taken(m)/10, bytesStr(p.Predicted.PeakBytes))
	if got != want {
		t.Errorf("Versus:\n got %s\nwant %s", got, want)
	}
	if got := p.Versus(m, 10, 0); strings.Contains(got, "peak") {
		t.Errorf("unknown peak reported: %s", got)
	}
	unknown, err := PlanFit(stream.Info{Terms: 5000, Rows: -1, NNZ: -1}, Config{K: 20, Alpha0: 1, Third: Explicit})
	if err != nil {
		t.Fatal(err)
	}
	if got := unknown.Versus(m, 3, 0); got != "CPU 3.0s (the plan could not forecast it: the number of documents was unknown)" {
		t.Errorf("unknown documents: %s", got)
	}
}

// TestFitProbesOnlyForAReader: a fit whose plan nobody reads (no OnPlan)
// does not time the machine; one that reports its plan gives it, and the
// revision, at the machine's speed.
func TestFitProbesOnlyForAReader(t *testing.T) {
	defer func(f func() float64) { machineCPU = f }(machineCPU)
	probes := 0
	machineCPU = func() float64 { probes++; return 3 }
	src, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 2000, K: 10, Alpha0: 1, DocLen: 50, Beta: 1, Seed: 3})
	for _, third := range []Third{Auto, Explicit} {
		if _, err := Fit(context.Background(), src, Config{K: 10, Alpha0: 1, Seed: 1, Third: third, EM: EM{Passes: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if probes != 0 {
		t.Errorf("%d probes for fits without a reader of the plan", probes)
	}
	var got []*Plan
	if _, err := Fit(context.Background(), src, Config{K: 10, Alpha0: 1, Seed: 1, Oversample: 2, OnPlan: func(p *Plan) { got = append(got, p) }}); err != nil {
		t.Fatal(err)
	}
	if probes != 1 || len(got) == 0 {
		t.Fatalf("%d probes, %d plans reported", probes, len(got))
	}
	for _, p := range got {
		if p.CPUScale != 3 {
			t.Errorf("reported plan (revised %v) at CPU scale %v, want 3", p.Revised, p.CPUScale)
		}
	}
}

// TestPlanCubeSample: on a corpus large enough for the automatic cube
// sample, the forecast with the power pass (the whitening then found
// negative directions) prices the cubes over the sample, the one without
// over every document, and the prediction for the passes taken prices the
// share the fit took: the sample's, every document's, or both when the
// fit summed them again.
func TestPlanCubeSample(t *testing.T) {
	info := stream.Info{Terms: 17705, Rows: 1_500_000, NNZ: 45_000_000}
	cfg := Config{K: 50, Alpha0: 1, Third: Explicit, Workers: 2}
	auto, err := PlanFit(info, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CubeSample = -1
	every, err := PlanFit(info, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, e := auto.Predicted, every.Predicted
	rate := float64(DefaultSample) / 45e6
	if a.cubes <= 0 || a.cubes != e.cubes || a.CPUSeconds != e.CPUSeconds {
		t.Fatalf("without a negative direction the forecasts differ: cubes %.4g/%.4g s, CPU %.4g/%.4g", a.cubes, e.cubes, a.CPUSeconds, e.CPUSeconds)
	}
	// With the sample, the power pass gathers the third moment's
	// statistics too (fused.go): the forecast saves what that pass does
	// not run again, and every document's cubes are not fused.
	if !(a.fused < 0) || e.fused != 0 {
		t.Fatalf("fused passes change %.4g s (every document's cubes: %.4g), want a saving and none", a.fused, e.fused)
	}
	if got, want := e.CPUSecondsPower-a.CPUSecondsPower, a.cubes*(1-rate)-a.fused; math.Abs(got-want) > 1e-9*want {
		t.Errorf("with the power pass the sample saves %.4g s, want the cubes' %.4g × (1 − %.4f) and the fused pass's %.4g", got, a.cubes, rate, -a.fused)
	}
	apart := &models.Model{Fit: &models.FitRecord{Passes: 3, PairFromPower: true, CubeSample: &models.CubeSample{Rate: rate}}}
	fused := &models.Model{Fit: &models.FitRecord{Passes: 2, PairFromPower: true, PowerFused: true, CubeSample: &models.CubeSample{Rate: rate}}}
	if got := auto.Taken(fused) - auto.Taken(apart); math.Abs(got-a.fused) > 1e-9*auto.Taken(apart) {
		t.Errorf("taken by a fit that fused the passes: %.4g s more than apart, want %.4g", got, a.fused)
	}
	m := func(cs *models.CubeSample) *models.Model {
		return &models.Model{Fit: &models.FitRecord{Passes: 3, CubeSample: cs}}
	}
	all := auto.Taken(m(nil))
	if got, want := all-auto.Taken(m(&models.CubeSample{Rate: rate})), a.cubes*(1-rate); math.Abs(got-want) > 1e-9*want {
		t.Errorf("taken with the sample: %.4g s less, want %.4g", got, want)
	}
	if got, want := auto.Taken(m(&models.CubeSample{Rate: rate, Redone: true}))-all, a.cubes*rate; math.Abs(got-want) > 1e-9*want {
		t.Errorf("taken with the sample redone: %.4g s more, want %.4g", got, want)
	}
	// The power pass's case takes the pair sums from that pass: its
	// forecast, and the passes taken by a fit that records it, leave them
	// out of the third-moment pass.
	if !(e.pairSums > 0 && e.pairSums < e.pass) {
		t.Fatalf("pair sums %.4g s of a pass of %.4g", e.pairSums, e.pass)
	}
	if got, want := e.CPUSecondsPower-e.CPUSeconds, e.power-e.pairSums; math.Abs(got-want) > 1e-9*e.CPUSeconds {
		t.Errorf("the power pass adds %.4g s, want the pass %.4g less the pair sums %.4g", got, e.power, e.pairSums)
	}
	pair := &models.Model{Fit: &models.FitRecord{Passes: 3, PairFromPower: true}}
	if got := all - auto.Taken(pair); math.Abs(got-a.pairSums) > 1e-9*a.pairSums {
		t.Errorf("taken with the pair sums from the power pass: %.4g s less, want %.4g", got, a.pairSums)
	}
}
