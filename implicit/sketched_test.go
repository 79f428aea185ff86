package implicit_test

import (
	"math"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// sketched accumulates the fixture's corpus into a SketchAcc split over two
// workers (merged, as a pass would) and returns the corrected sketch.
func (f *ldaFixture) sketched(t testing.TB, cfg implicit.SketchConfig) *implicit.SketchedMoments {
	t.Helper()
	d, _ := f.w.Dims()
	acc := implicit.NewSketchAcc(d, f.k, cfg)
	other := acc.Empty()
	i := 0
	eachBatch(t, f.src, func(b *stream.Docs) {
		if i%2 == 0 {
			acc.Add(b, f.w)
		} else {
			other.Add(b, f.w)
		}
		i++
	})
	if err := acc.Merge(other); err != nil {
		t.Fatal(err)
	}
	mom, err := acc.Moments(f.w, 2)
	if err != nil {
		t.Fatal(err)
	}
	mom.Correct(f.correction(mom.M1, mom.E2))
	return mom
}

// TestSketchedMatchesExplicit compares contractions of the sketched,
// LDA-corrected whitened third moment with the explicit packed tensor. The
// sketch's error per coordinate is about ‖T‖_F/√(b·count) for unit θ (the
// sketch package measures the constant at ≈1), so a column of k coordinates
// must be within 4√k‖T‖_F/√(b·count); a short sketch must be visibly worse.
func TestSketchedMatchesExplicit(t *testing.T) {
	f := newLDAFixture(t, 3000, 60, 5, 30, 11)
	exp := f.explicit(t)
	nt := math.Sqrt(exp.FrobeniusSq())
	errs := map[int]float64{}
	for _, b := range []int{128, 8192} {
		const count = 2
		mom := f.sketched(t, implicit.SketchConfig{Len: b, Count: count, Seed: 5, Mean: true})
		// The pair moments are exact (no sketch involved).
		if e2 := mom.E2; math.Abs(e2.At(0, 0)-1-f.a0/(f.a0+1)*mom.M1[0]*mom.M1[0]) > 1e-9 {
			t.Errorf("whitened M2 is not the identity: Ẽ2₀₀ = %g", e2.At(0, 0))
		}
		e, norm := maxColErr(t, mom.E3, exp, 30, 1)
		bound := 4 * math.Sqrt(float64(f.k)) * nt / math.Sqrt(float64(b*count))
		t.Logf("b=%d: max column error %.3g (bound %.3g, ‖T(I,θ,θ)‖ up to %.3g, ‖T‖_F %.3g)", b, e, bound, norm, nt)
		if e > bound {
			t.Errorf("b=%d: sketched contraction off by %.3g, above %.3g", b, e, bound)
		}
		errs[b] = e
	}
	if errs[8192] > errs[128]/3 {
		t.Errorf("error at b=8192 (%.3g) is not well below b=128 (%.3g)", errs[8192], errs[128])
	}
}

// TestSketchedRecoversTopics fits LDA end to end from the sketch (exact
// whitening, sketched corrected M3, RTPM, recovery) and compares the mean ℓ1
// error with the explicit path on the same corpus.
func TestSketchedRecoversTopics(t *testing.T) {
	f := newLDAFixture(t, 20000, 150, 10, 60, 21)
	exp := f.meanL1(t, decompose(t, f.explicit(t), f.k))
	mom := f.sketched(t, implicit.SketchConfig{Len: 4096, Count: 3, Seed: 9})
	sk := f.meanL1(t, decompose(t, mom.E3, f.k))
	t.Logf("mean ℓ1: explicit %.4f, sketch (b=4096, median of 3 sketches) %.4f", exp, sk)
	if exp > 0.15 {
		t.Errorf("explicit path mean ℓ1 %.3f: fixture too noisy to compare", exp)
	}
	if sk > exp+0.05 {
		t.Errorf("sketched fit mean ℓ1 %.4f, explicit %.4f: more than 0.05 worse", sk, exp)
	}
}

func TestSketchAccRefusesOtherBasis(t *testing.T) {
	f := newLDAFixture(t, 200, 30, 3, 20, 4)
	cfg := implicit.SketchConfig{Len: 64, Seed: 1}
	a, b := implicit.NewSketchAcc(30, 3, cfg), implicit.NewSketchAcc(30, 3, cfg)
	w2 := mat.DenseCopyOf(f.w)
	w2.Scale(2, w2)
	eachBatch(t, f.src, func(d *stream.Docs) { a.Add(d, f.w); b.Add(d, w2) })
	if err := a.Merge(b); err == nil {
		t.Error("merging sketches taken with different W succeeded")
	}
	c := implicit.NewSketchAcc(30, 3, implicit.SketchConfig{Len: 64, Seed: 2})
	eachBatch(t, f.src, func(d *stream.Docs) { c.Add(d, f.w) })
	if err := a.Merge(c); err == nil {
		t.Error("merging sketches with different hashes succeeded")
	}
}
