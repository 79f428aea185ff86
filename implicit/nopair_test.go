package implicit

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// TestTripleNoPair: statistics without the pair sums (SkipPair) hold every
// other total bit for bit as the full pass's, whatever the workers; given
// the full pass's Ê2·W, MomentsGiven returns its moments exactly; Moments
// refuses them, merges with pair sums are refused, and a statistics file
// keeps them without Z2.
func TestTripleNoPair(t *testing.T) {
	const d, k = 40, 5
	docs, _ := tinyCorpus(3000, d, 43)
	w := randDense(d, k, 44)
	for _, cubes := range []DocSample{{}, {Rate: 0.5, Seed: 3}} {
		noPairCase(t, docs, w, cubes)
	}
}

func noPairCase(t *testing.T, docs *stream.Docs, w *mat.Dense, cubes DocSample) {
	d, k := w.Dims()
	ctx := context.Background()
	full := NewTripleAcc(d, k)
	full.Cubes = cubes
	if err := full.Pass(ctx, batches(docs, 64, -1), 1, w, nil); err != nil {
		t.Fatal(err)
	}
	want, err := full.Moments(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		a := NewTripleAcc(d, k)
		a.Cubes = full.Cubes
		a.SkipPair()
		if err := a.Pass(ctx, batches(docs, 64, -1), workers, w, nil); err != nil {
			t.Fatal(err)
		}
		if a.Z2 != nil {
			t.Fatalf("%d workers: Z2 summed without the pair sums", workers)
		}
		for i, p := range [][2][]float64{{a.Y3, full.Y3}, {a.CubeSq, full.CubeSq}, {a.Z, full.Z}, {a.G3, full.G3}, {a.G2, full.G2}, {a.M1, full.M1}} {
			if !slices.Equal(p[0], p[1]) {
				t.Fatalf("cubes %+v, %d workers: total %d differs from the full pass's", cubes, workers, i)
			}
		}
		if _, err := a.Moments(w, 1); err == nil || !strings.Contains(err.Error(), "MomentsGiven") {
			t.Errorf("Moments without the pair sums: %v", err)
		}
		if _, err := a.MomentsGiven(w, nil, 1); err == nil {
			t.Errorf("MomentsGiven without the pair sums or Ê2·W: no error")
		}
		got, err := a.MomentsGiven(w, want.E2W, workers)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got.E2W, want.E2W) || !mat.Equal(got.E2, want.E2) || !slices.Equal(got.E3.Data, want.E3.Data) || !slices.Equal(got.M1, want.M1) {
			t.Errorf("%d workers: the moments from the given Ê2·W differ from the full pass's", workers)
		}
		if err := full.Merge(a); err == nil {
			t.Errorf("merge of statistics with and without the pair sums: no error")
		}
		st := &TopicStats{}
		st.Header.D, st.Header.K, st.Header.Cols, st.Header.Phase, st.Header.Model = d, k, k, 2, "lda"
		st.Triple = a
		var buf bytes.Buffer
		if err := st.Encode(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		back, err := DecodeTopicStats(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if b := back.Triple; !b.NoPair || b.Z2 != nil || !slices.Equal(b.Z, a.Z) || !slices.Equal(b.Y3, a.Y3) || b.Counts != a.Counts {
			t.Errorf("statistics without the pair sums changed in the round trip")
		}
	}
	// The Ê2·W given is what the moments use: another one gives other
	// WᵀÊ2W.
	e2w := mat.DenseCopyOf(want.E2W)
	e2w.Scale(2, e2w)
	a := NewTripleAcc(d, k)
	a.SkipPair()
	if err := a.Pass(ctx, batches(docs, 64, -1), 1, w, nil); err != nil {
		t.Fatal(err)
	}
	got, err := a.MomentsGiven(w, e2w, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g, h := got.E2.At(0, 0), want.E2.At(0, 0); !near(g, 2*h, 1e-12, 1) {
		t.Errorf("WᵀÊ2W from twice Ê2·W: %g, want %g", g, 2*h)
	}
}
