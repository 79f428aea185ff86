package implicit

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/tensor"
)

// TestDocSample checks the sample's share of the documents, its
// determinism, that the seed changes it, and that the zero value and a
// rate of 1 hold every document.
func TestDocSample(t *testing.T) {
	const n = 200000
	for _, rate := range []float64{0.01, 0.25, 0.9} {
		s := DocSample{Rate: rate, Seed: 7}
		keeps, again, other := s.Keeps(), s.Keeps(), DocSample{Rate: rate, Seed: 8}.Keeps()
		kept, differ := 0, 0
		for i := range int64(n) {
			k := keeps(i)
			if k != again(i) {
				t.Fatalf("rate %g: document %d is kept by one test and not by the other", rate, i)
			}
			if k {
				kept++
			}
			if k != other(i) {
				differ++
			}
		}
		// A binomial count: within 5 standard deviations.
		sd := math.Sqrt(n * rate * (1 - rate))
		if math.Abs(float64(kept)-n*rate) > 5*sd {
			t.Errorf("rate %g: %d of %d documents kept, want %.0f ± %.0f", rate, kept, n, n*rate, 5*sd)
		}
		if differ == 0 {
			t.Errorf("rate %g: seeds 7 and 8 give the same sample", rate)
		}
	}
	for _, s := range []DocSample{{}, {Rate: 1, Seed: 3}, {Rate: 2}} {
		keeps := s.Keeps()
		if !s.All() || !keeps(0) || !keeps(12345) {
			t.Errorf("%+v does not hold every document", s)
		}
	}
}

// TestTripleCubeSample checks the cubes summed over a sample of the
// documents against brute force (Σ over the kept documents of
// y⊗y⊗y/(n3·rate)), that every other sum is the full pass's bit for bit,
// that the statistics do not depend on workers or batches, and that
// statistics of other samples do not merge.
func TestTripleCubeSample(t *testing.T) {
	const d, k = 40, 5
	docs, toks := tinyCorpus(3000, d, 41)
	w := randDense(d, k, 42)
	s := DocSample{Rate: 0.3, Seed: 9}
	keeps := s.Keeps()
	want := make([]float64, k*pairs(k))
	wantSq := 0.0
	for i, tk := range toks {
		l := len(tk)
		if l < MinTokens || !keeps(int64(i)) {
			continue
		}
		y := make([]float64, k)
		for _, term := range tk {
			for a := range k {
				y[a] += w.At(term, a)
			}
		}
		inv := 1 / (float64(l*(l-1)*(l-2)) * s.Rate)
		for a := range k {
			for b := range k {
				for c := range k {
					v := y[a] * y[b] * y[c] * inv
					wantSq += v * v
				}
			}
		}
		for a := range k {
			for b := a; b < k; b++ {
				for c := b; c < k; c++ {
					want[a*pairs(k)+pairOffset(b, k)+c-b] += y[a] * y[b] * y[c] * inv
				}
			}
		}
	}
	full := NewTripleAcc(d, k)
	if err := full.Pass(context.Background(), batches(docs, 64, -1), 1, w, nil); err != nil {
		t.Fatal(err)
	}
	var ref *TripleAcc
	for _, run := range []struct{ rows, workers int }{{64, 1}, {64, 3}, {500, 2}} {
		a := NewTripleAcc(d, k)
		a.Cubes = s
		if err := a.Pass(context.Background(), batches(docs, run.rows, -1), run.workers, w, nil); err != nil {
			t.Fatal(err)
		}
		for a0 := range k {
			for b := a0; b < k; b++ {
				for c := b; c < k; c++ {
					i := a0*pairs(k) + pairOffset(b, k) + c - b
					if !near(a.Y3[i], want[i], 1e-9, math.Abs(want[i])+1e-6) {
						t.Fatalf("batches of %d, %d workers: Y3[%d,%d,%d] = %g, brute force %g", run.rows, run.workers, a0, b, c, a.Y3[i], want[i])
					}
				}
			}
		}
		if len(a.CubeSq) != 1 || !near(a.CubeSq[0], wantSq, 1e-9, wantSq) {
			t.Fatalf("batches of %d, %d workers: CubeSq = %v, brute force %g", run.rows, run.workers, a.CubeSq, wantSq)
		}
		// The full pass's batches were of 64 documents; the plain totals
		// of other batches differ in their last bits.
		for _, p := range [][2][]float64{{a.Z, full.Z}, {a.Z2, full.Z2}, {a.G3, full.G3}, {a.G2, full.G2}, {a.M1, full.M1}} {
			if run.rows == 64 && !slices.Equal(p[0], p[1]) {
				t.Fatalf("batches of %d, %d workers: a sum other than the cubes differs from the full pass's", run.rows, run.workers)
			}
		}
		if ref == nil {
			ref = a
		} else if run.rows == 64 && !slices.Equal(a.Y3, ref.Y3) {
			t.Errorf("%d workers: the sampled cubes differ from 1 worker's", run.workers)
		}
	}
	other := NewTripleAcc(d, k)
	other.Cubes = DocSample{Rate: 0.3, Seed: 10}
	if err := ref.Merge(other); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("merge of cubes over another sample: %v", err)
	}
	if err := full.Merge(other); !errors.Is(err, statsfile.ErrIncompatible) {
		t.Errorf("merge of cubes over a sample into those over every document: %v", err)
	}
}

// TestCubeStdErr checks the cube sample's standard error against the
// spread of the sampled cubes around the full pass's over many seeds: the
// root mean square of ‖Ê3(sample) − Ê3(all)‖_F over the seeds agrees with
// the mean CubeStdErr, which is 0 without a sample.
func TestCubeStdErr(t *testing.T) {
	const d, k, seeds = 30, 4, 300
	docs, _ := tinyCorpus(2000, d, 43)
	w := randDense(d, k, 44)
	full := NewTripleAcc(d, k)
	if err := full.Pass(context.Background(), batches(docs, 200, -1), 1, w, nil); err != nil {
		t.Fatal(err)
	}
	if full.CubeSq != nil || full.CubeStdErr() != 0 {
		t.Fatalf("every document: CubeSq %v, CubeStdErr %g", full.CubeSq, full.CubeStdErr())
	}
	for _, rate := range []float64{0.1, 0.5} {
		msq, mse := 0.0, 0.0
		for seed := range uint64(seeds) {
			a := NewTripleAcc(d, k)
			a.Cubes = DocSample{Rate: rate, Seed: seed + 1}
			if err := a.Pass(context.Background(), batches(docs, 200, -1), 1, w, nil); err != nil {
				t.Fatal(err)
			}
			diff := make([]float64, len(a.Y3))
			for i := range diff {
				diff[i] = a.Y3[i] - full.Y3[i]
			}
			e := tensor.NewSym3(k)
			packCubes(e.Data, diff, k, 1/float64(a.Docs))
			msq += e.FrobeniusSq() / seeds
			mse += a.CubeStdErr() / seeds
		}
		rms := math.Sqrt(msq)
		t.Logf("rate %g: rms %.4g, mean CubeStdErr %.4g", rate, rms, mse)
		if math.Abs(rms/mse-1) > 0.15 {
			t.Errorf("rate %g: the sampled cubes lie %.4g (rms over %d seeds) from all documents', CubeStdErr %.4g on average", rate, rms, seeds, mse)
		}
	}
}
