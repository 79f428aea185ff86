package markov

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

func truthOf(t synth.SnapshotTruth) *Model {
	return &Model{Model: t.Model, K: t.K, D: t.D, Alpha0: t.Alpha0, R: t.R, Pi: t.Pi, P: t.P, T: t.T, U: t.U, UT: t.UT, Sigma2: t.Sigma2}
}

func TestFitChainRecovers(t *testing.T) {
	src, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 20000, PerSet: 10, K: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := truthOf(src.Truth)
	for _, r := range []float64{0.3, 0} {
		m, err := FitChain(context.Background(), src, Config{Alpha0: 1, R: r, Seed: 3, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Eval(m, tr)
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
	m, err := FitHMM(context.Background(), src, Config{K: 3, Alpha0: 1, R: 0.3, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Eval(m, truthOf(src.Truth))
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
	if _, err := FitChain(ctx, &stream.MemoryDense{All: rows}, Config{}); !errors.Is(err, stream.ErrSchema) || !strings.Contains(err.Error(), "set id") {
		t.Errorf("missing ids: %v", err)
	}
	small := &stream.Dense{Rows: 4, Cols: 2, Data: rows.Data, Group: []int64{1, 1, 2, 2}}
	if _, err := FitChain(ctx, &stream.MemoryDense{All: small}, Config{}); !errors.Is(err, stream.ErrValue) || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("small sets: %v", err)
	}
	if _, err := FitHMM(ctx, &stream.MemoryDense{All: small}, Config{K: 3}); err == nil || !strings.Contains(err.Error(), "k ≤ d") {
		t.Errorf("k > d: %v", err)
	}
}
