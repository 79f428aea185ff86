package lda

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPairFromPower: where Fit's power pass whitens with its Ritz vectors
// (a corpus with a negative direction of M̂2, headerDocs), W lies in that
// pass's span, and Ê2·W comes from its sums instead of being summed again
// by the third-moment pass. The model is the one the pair sums give, to
// the rounding of the passes' partial sums (float32, or float64), and the
// same bytes whatever the workers; a clean corpus takes no power pass and
// sums them.
func TestPairFromPower(t *testing.T) {
	ctx := context.Background()
	lda, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42})
	src := headerDocs{lda, 1}
	for _, f64 := range []bool{false, true} {
		cfg := Config{K: 10, Alpha0: 1, Seed: 1, EM: EM{Passes: -1}, float64Sums: f64}
		m, err := Fit(ctx, src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sums := cfg
		sums.pairSums = true
		ref, err := Fit(ctx, src, sums)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Fit.PairFromPower || ref.Fit.PairFromPower || m.Fit.Passes != 3 {
			t.Fatalf("float64 %v: pair from the power pass %v (summed: %v), %d passes", f64, m.Fit.PairFromPower, ref.Fit.PairFromPower, m.Fit.Passes)
		}
		topics, eig := 0.0, 0.0
		for i := range m.Topics {
			topics = max(topics, models.L1(m.Topics[i], ref.Topics[i]))
		}
		for i, v := range m.Fit.M2Eigenvalues {
			eig = max(eig, math.Abs(v-ref.Fit.M2Eigenvalues[i])/ref.Fit.M2Eigenvalues[0])
		}
		t.Logf("float64 %v: topics differ by ℓ1 ≤ %.2g, M2 eigenvalues by %.2g of the largest", f64, topics, eig)
		tol := 1e-4
		if f64 {
			tol = 1e-9
		}
		if topics > tol || eig > tol {
			t.Errorf("float64 %v: topics differ by ℓ1 %.3g, M2 eigenvalues by %.3g (tolerance %g)", f64, topics, eig, tol)
		}
	}
	var ref *models.Model
	for _, workers := range []int{1, 3} {
		m, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, EM: EM{Passes: -1}, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = m
		} else if !sameModel(m, ref) {
			t.Errorf("%d workers: another model than 1 worker's", workers)
		}
	}
	clean, err := Fit(ctx, lda, Config{K: 10, Alpha0: 1, Seed: 1, EM: EM{Passes: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if clean.Fit.PairFromPower {
		t.Errorf("a corpus without negative directions took Ê2·W from a power pass")
	}
}

// TestPairFromPowerResume: a fit stopped inside its third-moment pass
// without the pair sums resumes from its checkpoint to the model of an
// uninterrupted fit, which took Ê2·W from its power pass.
func TestPairFromPowerResume(t *testing.T) {
	lda, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42, BatchRows: 500})
	src := headerDocs{lda, 1}
	cfg := Config{K: 10, Alpha0: 1, Seed: 1, Workers: 2, Third: Explicit, EM: EM{Passes: -1}}
	ref, err := Fit(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !ref.Fit.PairFromPower || ref.Fit.Passes != 3 {
		t.Fatalf("the reference fit: pair from the power pass %v, %d passes", ref.Fit.PairFromPower, ref.Fit.Passes)
	}
	cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "header 43", Every: -1}
	got, read := stopAndResume(t, src, cfg, 3, 10000)
	if read == 0 || read >= 40 {
		t.Errorf("the resumed fit read %d batches of pass 3, want fewer than all 40", read)
	}
	if !sameModel(got, ref) || !got.Fit.PairFromPower {
		t.Errorf("the resumed fit differs from an uninterrupted one (pair from the power pass: %v)", got.Fit.PairFromPower)
	}
}

// stopAndResume runs cfg's fit (with a checkpoint) until pass has read
// docs documents, stops it, and runs it again to its end from the
// checkpoint: the resumed model, and the batches that run read in pass.
func stopAndResume(t *testing.T, src stream.DocSource, cfg Config, pass int, docs int64) (*models.Model, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stop := cfg
	stop.Progress = func(p Progress) {
		if p.Pass == pass && p.Docs >= docs {
			cancel()
		}
	}
	if _, err := Fit(ctx, src, stop); !errors.Is(err, context.Canceled) {
		t.Fatalf("fit stopped in pass %d: %v", pass, err)
	}
	cancel()
	read := 0
	cfg.Progress = func(p Progress) {
		if p.Pass == pass && !p.Done {
			read++
		}
	}
	got, err := Fit(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return got, read
}
