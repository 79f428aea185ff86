package markov_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

func TestFitChainRecovers(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 20000, PerSet: 10, K: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := markov.TruthOf(src)
	for _, r := range []float64{0.3, 0} {
		m, err := markov.FitChain(context.Background(), src, markov.Config{Alpha0: 1, R: r, Seed: 3, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := markov.Eval(m, tr)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("r=%g→%.2f: T %.4f P %.4f pi %.4f", r, m.R, ev.T, ev.P, ev.Pi)
		// 20000 sets of 10: moment errors of a few 1e-3, which
		// P = (rI+(1−r)T)⁻¹T amplifies by ‖(rI+(1−r)T)⁻¹‖ (about 3 here).
		if ev.T > 0.05 || ev.P > 0.15 || ev.Pi > 0.05 {
			t.Errorf("r=%g: T %.4f, P %.4f, pi %.4f too large", r, ev.T, ev.P, ev.Pi)
		}
		if r == 0 && (m.R < 0.15 || m.R > 0.4) {
			t.Errorf("scanned r=%.2f, want in [0.15, 0.4] (the take-off is biased low at small N)", m.R)
		}
	}
}

func TestFitHMMRecovers(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 4000, PerSet: 100, K: 3, M: 10, Sigma2: 0.5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := markov.FitHMM(context.Background(), src, markov.Config{K: 3, Alpha0: 1, R: 0.3, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("U %.4f UT %.4f P %.4f pi %.4f sigma2 %.3f", ev.U, ev.UT, ev.P, ev.Pi, m.Sigma2)
	if ev.U > 0.05 || ev.UT > 0.1 || ev.P > 0.3 || ev.Pi > 0.1 {
		t.Errorf("U %.4f, UT %.4f, P %.4f, pi %.4f too large", ev.U, ev.UT, ev.P, ev.Pi)
	}
}

func TestFitErrors(t *testing.T) {
	ctx := context.Background()
	rows := &stream.Dense{Rows: 4, Cols: 2, Data: []float64{1, 0, 0, 1, 1, 0, 0, 1}}
	if _, err := markov.FitChain(ctx, &stream.MemoryDense{All: rows}, markov.Config{}); !errors.Is(err, stream.ErrSchema) || !strings.Contains(err.Error(), "set id") {
		t.Errorf("missing ids: %v", err)
	}
	small := &stream.Dense{Rows: 4, Cols: 2, Data: rows.Data, Group: []int64{1, 1, 2, 2}}
	if _, err := markov.FitChain(ctx, &stream.MemoryDense{All: small}, markov.Config{}); !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("small sets: %v", err)
	}
	if _, err := markov.FitHMM(ctx, &stream.MemoryDense{All: small}, markov.Config{K: 3}); !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("k > d, small sets: %v", err)
	}
	notHot := &stream.Dense{Rows: 3, Cols: 2, Data: []float64{1, 0, 0.5, 0.5, 0, 1}, Group: []int64{1, 1, 1}}
	if _, err := markov.FitHMM(ctx, &stream.MemoryDense{All: notHot}, markov.Config{K: 1, Discrete: true}); !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "--discrete") {
		t.Errorf("discrete, a row not one-hot: %v", err)
	}
}

// Regression (issue 5): two hidden states with close weights made 001's
// sort-by-weight pairing of the U and UT decompositions swap them (UT error
// 0.55, P error 1.14 from `gen snapshots --sets 2000 --per-set 100 --k 3 --m
// 10 --sigma2 0.5 --seed 2` and `fit hmm-snapshot --r 0.3 --seed 3`). With
// the stochasticity criterion the errors are those of U and UT alone (≈ 0.02
// and 0.06 here), P a few times that.
func TestFitHMMPairsCloseWeights(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 2000, PerSet: 100, K: 3, M: 10, Sigma2: 0.5, Seed: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// r given (the command), and r unknown (pairings compared by
	// their scans).
	for _, r := range []float64{0.3, 0} {
		m, err := markov.FitHMM(context.Background(), src, markov.Config{K: 3, R: r, Seed: 3, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := markov.Eval(m, markov.TruthOf(src))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("r=%g→%.2f: U %.4f UT %.4f P %.4f pairing %v (cost %.3g)", r, m.R, ev.U, ev.UT, ev.P, m.Fit.Pairing, m.Fit.PairingCost)
		if ev.U > 0.05 || ev.UT > 0.1 || ev.P > 0.15 {
			t.Errorf("r=%g: U %.4f, UT %.4f, P %.4f: states mis-paired?", r, ev.U, ev.UT, ev.P)
		}
	}
}

// With r unknown the scan recovers it on the 001 §4 model (m=40, k=5, σ²=2)
// at N=1000 sets of 1000: the negative mass of P(r) is 0 down to r ≈ r* and
// grows below. The tolerance 0.05 is several grid steps; at this N the
// estimate wanders by about ±0.05 with the data (bench/models/RESULTS.md).
func TestFitHMMScansR(t *testing.T) {
	if testing.Short() {
		t.Skip("a million rows, twice")
	}
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 1000, PerSet: 1000, K: 5, M: 40, Sigma2: 2, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := markov.FitHMM(context.Background(), src, markov.Config{K: 5, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("r=%.2f U %.4f UT %.4f P %.4f", m.R, ev.U, ev.UT, ev.P)
	if !m.Fit.RScanned || math.Abs(m.R-0.3) > 0.05 || ev.P > 0.1 {
		t.Errorf("scanned r=%.2f (true 0.3), P error %.4f", m.R, ev.P)
	}
}

// A chain whose P has an eigenvalue near −0.6 (synth Family "flip") puts a
// pole of rI + (1−r)T near r = 0.11 (001 Thm 2): P(r) blows up there and its
// negative mass spikes. The scan must mark the pole, skip it and still find
// r* = 0.3 above it.
func TestScanStepsAroundPole(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 50000, PerSet: 10, K: 3, Family: "flip", Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := markov.FitChain(context.Background(), src, markov.Config{Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	var poles []float64
	for _, p := range m.Scan {
		if p.Pole {
			poles = append(poles, p.R)
		}
	}
	t.Logf("r=%.2f T %.4f P %.4f, pole window %v", m.R, ev.T, ev.P, poles)
	if len(poles) == 0 || poles[0] > 0.2 || poles[len(poles)-1] < 0.05 {
		t.Errorf("no pole marked near 0.11: %v", poles)
	}
	if math.Abs(m.R-0.3) > 0.05 || ev.P > 0.1 {
		t.Errorf("scanned r=%.2f (true 0.3), P error %.4f", m.R, ev.P)
	}
}

// Sets much larger than a batch are accumulated piece by piece: 4× the rows
// (4× the sets, each set 4× larger: 40 sets of 20000 rows) must not raise the
// peak heap by more than 2 MB. Holding one open set of 20000 rows of d=40,
// as the fit once did, would alone take 6.4 MB.
func TestMemoryIndependentOfRows(t *testing.T) {
	memtest.Check(t, 10, 2<<20, func(sets int64) error {
		src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: sets, PerSet: int(500 * sets), K: 3, M: 40, Sigma2: 0.5, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			return err
		}
		_, err = markov.FitHMM(context.Background(), src, markov.Config{K: 3, R: 0.3, Seed: 1})
		return err
	})
}

func TestConfigErrors(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 10, PerSet: 5, K: 3, M: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		cfg  markov.Config
		want string
	}{
		{markov.Config{K: 2, Alpha0: -1}, "alpha0"},
		{markov.Config{K: 2, Sigma2: -2}, "sigma2"},
		{markov.Config{K: 2, R: 1.5}, "r=1.5"},
		{markov.Config{K: 2, Solver: "magic"}, "magic"},
		{markov.Config{K: 2, Discrete: true, Sigma2: 1}, "Discrete"},
	} {
		if _, err := markov.FitHMM(ctx, src, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	// Real-valued rows are not a chain's one-hot states.
	if _, err := markov.FitChain(ctx, src, markov.Config{}); !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "one-hot") || !strings.Contains(err.Error(), "row 0") {
		t.Errorf("non-one-hot rows: %v", err)
	}
}

// More states than the exhaustive pairing tries (k = 8 > 6): the local
// search from 001's sorted pairing keeps or improves it. P = 0.7I + 0.3q1ᵀ
// with qᵢ ∝ i+1 (stationary π = q, well separated) and one zero entry;
// 40000 sets of 20 one-hot points. The tolerance is a few times that of the
// 4-state test (twice the states, each seen less often).
func TestFitChainManyStates(t *testing.T) {
	const k = 8
	p := make([][]float64, k)
	for i := range p {
		p[i] = make([]float64, k)
		for j := range k {
			p[i][j] = 0.3 * float64(i+1) / 36
			if i == j {
				p[i][j] += 0.7
			}
		}
	}
	p[0][0] += p[1][0] // the one zero entry, column 0 still sums to 1
	p[1][0] = 0
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 40000, PerSet: 20, K: k, P: p, Seed: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := markov.FitChain(context.Background(), src, markov.Config{R: 0.3, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := markov.Eval(m, markov.TruthOf(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("T %.4f P %.4f pi %.4f pairing %v", ev.T, ev.P, ev.Pi, m.Fit.Pairing)
	if ev.T > 0.1 || ev.P > 0.2 {
		t.Errorf("T %.4f, P %.4f too large", ev.T, ev.P)
	}
}

// snapshotWeights is the distribution of a snapshot's hidden state,
// T(r)π = Σₜ r(1−r)ᵗPᵗπ, summed until the terms vanish.
func snapshotWeights(m *markov.Model) []float64 {
	k := m.K
	w, term := make([]float64, k), append([]float64(nil), m.Pi...)
	for range 2000 {
		next := make([]float64, k)
		for i := range k {
			w[i] += m.R * term[i]
			for j := range k {
				next[i] += (1 - m.R) * m.P[i][j] * term[j]
			}
		}
		term = next
	}
	return w
}

// A k above the moments' positive directions (or above d) used to be
// refused; the fit now gives the states the moments hold and copies of
// them, and the k-state model's snapshots are distributed as the smaller
// model's.
func TestFitHMMFewerStates(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 2000, PerSet: 20, K: 3, M: 6, Sigma2: 0.5, Alpha0: 1, R: 0.3, Family: "stay", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 3 true states; seed 1 gives 2 eigenvalues of M2' above noise.
	m6, err := markov.FitHMM(ctx, src, markov.Config{K: 6, R: 0.3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := m6.Fit.States
	if c < 1 || c >= 6 {
		t.Fatalf("k=6: %d states fitted, want fewer than 6", c)
	}
	small, err := markov.FitHMM(ctx, src, markov.Config{K: c, R: 0.3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if copies(small.Warnings()) != nil || small.Fit.States != c {
		t.Fatalf("k=%d: %d states fitted, warnings %q", c, small.Fit.States, small.Warnings())
	}
	for _, k := range []int{6, 8} {
		m, err := markov.FitHMM(ctx, src, markov.Config{K: k, R: 0.3, Seed: 3})
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if m.K != k || len(m.Pi) != k || len(m.P) != k || len(m.U) != k || len(m.UT) != k {
			t.Fatalf("k=%d: a model of %d states (%d pi, %d P, %d U, %d UT)", k, m.K, len(m.Pi), len(m.P), len(m.U), len(m.UT))
		}
		if w := copies(m.Warnings()); len(w) != 1 || !strings.Contains(w[0], fmt.Sprintf("give %d of the k=%d", c, k)) {
			t.Errorf("k=%d: warnings %q, want one saying %d states and copies", k, m.Warnings(), c)
		}
		// Each state is one of the c-state fit's, its U and UT columns
		// exactly; lumped, π, P and the snapshot state weights are its.
		src := make([]int, k)
		for i := range k {
			src[i] = -1
			for s := range small.K {
				if slices.Equal(m.U[i], small.U[s]) && slices.Equal(m.UT[i], small.UT[s]) {
					src[i] = s
				}
			}
			if src[i] < 0 {
				t.Fatalf("k=%d: state %d is none of the %d-state fit's", k, i, c)
			}
		}
		pi, w6, w4 := make([]float64, small.K), make([]float64, small.K), snapshotWeights(small)
		for i, wi := range snapshotWeights(m) {
			pi[src[i]] += m.Pi[i]
			w6[src[i]] += wi
		}
		for s := range small.K {
			if math.Abs(pi[s]-small.Pi[s]) > 1e-12 || math.Abs(w6[s]-w4[s]) > 1e-9 {
				t.Errorf("k=%d: state %d: lumped pi %.6g, snapshot weight %.6g; the %d-state fit's %.6g, %.6g", k, s, pi[s], w6[s], c, small.Pi[s], w4[s])
			}
			for j := range k {
				var p float64
				for i := range k {
					if src[i] == s {
						p += m.P[i][j]
					}
				}
				if math.Abs(p-small.P[s][src[j]]) > 1e-12 {
					t.Errorf("k=%d: lumped P[%d][%d] = %.6g, the %d-state fit's %.6g", k, s, j, p, c, small.P[s][src[j]])
				}
			}
		}
	}
}

// One-hot symbols (--discrete): the set moments give UT, which for a
// chain's snapshots (U = I) is T; the emissions are distributions with
// every symbol positive, P = I.
func TestFitHMMDiscrete(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 20000, PerSet: 10, K: 4, Alpha0: 1, R: 0.3, Family: "stay", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := markov.TruthOf(src)
	m, err := markov.FitHMM(context.Background(), src, markov.Config{K: 4, Seed: 3, Discrete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Discrete || m.R != 1 || m.Sigma2 != 0 {
		t.Errorf("discrete %v, r %g, sigma2 %g; want true, 1, 0", m.Discrete, m.R, m.Sigma2)
	}
	// UT's column i is T's column i (T[i] is row i of T, UT[i] column i).
	tcols := make([][]float64, 4)
	for i := range tcols {
		tcols[i] = make([]float64, 4)
		for j := range tcols[i] {
			tcols[i][j] = tr.T[j][i]
		}
	}
	perm, err := models.MatchNearest(tcols, m.UT)
	if err != nil {
		t.Fatal(err)
	}
	if e := models.RelErrCols(m.UT, tcols, perm); e > 0.05 {
		t.Errorf("UT against T: relative error %.4f", e)
	}
	for i := range m.K {
		var sum float64
		for _, v := range m.U[i] {
			if !(v > 0) {
				t.Errorf("state %d: a symbol of probability %g", i, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("state %d: emissions sum to %.15g", i, sum)
		}
		for j := range m.K {
			if want := float64(b2i(i == j)); m.P[i][j] != want {
				t.Errorf("P[%d][%d] = %g, want %g", i, j, m.P[i][j], want)
			}
		}
	}
}

// copies returns the warnings about states added as copies.
func copies(warnings []string) []string {
	var out []string
	for _, w := range warnings {
		if strings.Contains(w, "copies") {
			out = append(out, w)
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
