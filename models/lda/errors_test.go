package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	small, _ := corpus(t, synth.LDAConfig{Docs: 500, Vocab: 50, K: 3, Alpha0: 1, DocLen: 30, Seed: 1})
	short := &stream.Docs{Offsets: []int{0}}
	for range 10 {
		short.AppendDoc([]int32{1, 2}, []int32{1, 1})
	}
	shortSrc := &stream.MemoryDocs{All: short, Terms: 50}
	tenDocs := func() *stream.Docs {
		docs := &stream.Docs{Offsets: []int{0}}
		for i := range int32(10) {
			docs.AppendDoc([]int32{i, i + 10, i + 20, i + 30}, []int32{2, 1, 1, 1})
		}
		return docs
	}
	for _, tc := range []struct {
		name string
		src  stream.DocSource
		cfg  Config
		want string
		is   error
	}{
		{"k≥d", small, Config{K: 50, Alpha0: 1}, "lower k", nil},
		{"k=0", small, Config{K: 0, Alpha0: 1}, "at least 1", nil},
		{"alpha0<0", small, Config{K: 3, Alpha0: -1}, "finite number > 0", nil},
		{"alpha0=0", small, Config{K: 3}, "alpha0 (the Dirichlet concentration α₀) must be given", nil},
		{"alpha0=+Inf", small, Config{K: 3, Alpha0: math.Inf(1)}, "alpha0=+Inf", nil},
		{"alpha0=NaN", small, Config{K: 3, Alpha0: math.NaN()}, "alpha0=NaN", nil},
		{"no docs", shortSrc, Config{K: 3, Alpha0: 1}, "no usable documents", implicit.ErrNoDocs},
		{"k>documents", &stream.MemoryDocs{All: tenDocs(), Terms: 50}, Config{K: 20, Alpha0: 1}, "lower k to 10", ErrTooManyTopics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(ctx, tc.src, tc.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("error %q, want it to contain %q (and wrap %v)", err, tc.want, tc.is)
			}
		})
	}
}

// TestSkippedAndDeterministic checks the counts of skipped documents and that
// the same input and seed give an identical model whatever the number of
// workers (batches are reduced concurrently but summed in order).
func TestSkippedAndDeterministic(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 400, K: 4, Alpha0: 1, DocLen: 40, Seed: 3})
	all, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	all.AppendDoc([]int32{7}, []int32{2}) // 2 tokens: skipped
	all.AppendDoc(nil, nil)               // empty: skipped
	mem := &stream.MemoryDocs{All: all, Terms: 400, BatchRows: 256}
	fit := func(workers int, implicitOp bool) *models.Model {
		m, err := Fit(context.Background(), mem, Config{K: 4, Alpha0: 1, Seed: 9, Workers: workers, Implicit: implicitOp})
		if err != nil {
			t.Fatal(err)
		}
		m.Fit.Seconds = 0
		return m
	}
	a := fit(2, false)
	if a.Fit.Skipped != 2 || a.Fit.Docs != 3000 {
		t.Errorf("docs %d skipped %d, want 3000 and 2", a.Fit.Docs, a.Fit.Skipped)
	}
	for _, w := range []int{2, 1, 3, 7} {
		if b := fit(w, false); !reflect.DeepEqual(a, b) {
			t.Errorf("fits with 2 and %d workers differ", w)
		}
	}
	// The implicit operator keeps rows in document order whatever the workers.
	if b, c := fit(1, true), fit(3, true); !reflect.DeepEqual(b, c) {
		t.Error("implicit fits with 1 and 3 workers differ")
	}
	path := filepath.Join(t.TempDir(), "model.json")
	if err := a.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := models.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.K != 4 || back.D != 400 || back.Fit.Docs != 3000 || len(back.Fit.Solver.Eigenvalues) != 4 {
		t.Errorf("model file read back as %+v", back)
	}
}

func TestProgressAndCancel(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 400, K: 4, Alpha0: 1, DocLen: 40, Seed: 3, BatchRows: 500})
	var done []string
	m, err := Fit(context.Background(), src, Config{K: 4, Alpha0: 1, Seed: 1, Progress: func(p Progress) {
		if p.Done {
			done = append(done, p.Stage)
			if p.Docs != 3000 {
				t.Errorf("pass %d done after %d documents", p.Pass, p.Docs)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"second-moment", "third-moment"}; !reflect.DeepEqual(done, want) || m.Fit.Passes != 2 {
		t.Errorf("passes %v (%d), want %v", done, m.Fit.Passes, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Fit(ctx, src, Config{K: 4, Alpha0: 1, Seed: 1, Progress: func(p Progress) {
		if p.Pass == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fit returned %v", err)
	}
}

// TestTooManyTopics covers k above the number of topics the data hold, on
// 3-topic corpora (exact whitening at d=200, randomized at d=500): k=3 fits
// without warnings; k = 4, 5, 10 are never accepted silently: the fit
// either warns (say Σα̂ ≈ 1.27 against α₀=1, and M̂2 eigenvalues beyond the
// third below 1% of the first, which the warning counts to suggest k=3),
// every warning telling to lower k, or meets a direction of negative
// curvature of M̂2 (or topics that are no distributions) and is refused
// with ErrTooManyTopics.
func TestTooManyTopics(t *testing.T) {
	ctx := context.Background()
	for _, d := range []int{200, 500} {
		src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: d, K: 3, Alpha0: 1, DocLen: 100, Seed: 5})
		for _, k := range []int{3, 4, 5, 10} {
			m, err := Fit(ctx, src, Config{K: k, Alpha0: 1, Seed: 1})
			switch {
			case errors.Is(err, ErrTooManyTopics):
				t.Logf("d=%d k=%d: %v", d, k, err)
				if k == 3 || !strings.Contains(err.Error(), "lower k") {
					t.Errorf("d=%d k=%d on 3 topics: %v", d, k, err)
				}
				continue
			case err != nil:
				t.Fatal(err)
			}
			t.Logf("d=%d k=%d warnings: %q", d, k, m.Fit.Warnings)
			if (len(m.Fit.Warnings) > 0) != (k > 3) {
				t.Errorf("d=%d k=%d on 3 topics: warnings %q", d, k, m.Fit.Warnings)
			}
			for _, w := range m.Fit.Warnings {
				if !strings.Contains(w, "lower k") {
					t.Errorf("warning %q does not say to lower k", w)
				}
			}
			if k > 3 && !slices.ContainsFunc(m.Fit.Warnings, func(w string) bool { return strings.Contains(w, "support about 3 topics") }) {
				t.Errorf("d=%d k=%d: no warning suggests 3 topics: %q", d, k, m.Fit.Warnings)
			}
		}
	}
}

// TestDiagnoseListsFewTopics: the warning about topics the projection moved
// names the first warnList of them and counts the rest, so that k=1000 does
// not print a screen of numbers; a short list is named whole.
func TestDiagnoseListsFewTopics(t *testing.T) {
	for _, far := range []int{3, 25} {
		m := &models.Model{Alpha: make([]float64, 40), Fit: &models.FitRecord{ProjectionL1: make([]float64, 40)}}
		for i := range m.Alpha {
			m.Alpha[i] = 1.0 / 40
			if i < far {
				m.Fit.ProjectionL1[i] = 0.3
			}
		}
		warns, err := diagnose(m, Config{K: 40, Alpha0: 1}, &basis{})
		if err != nil || len(warns) != 1 {
			t.Fatalf("%d far topics: warnings %q, err %v", far, warns, err)
		}
		named := strings.Count(warns[0], "(0.30)")
		more := strings.Contains(warns[0], fmt.Sprintf("and %d more", far-warnList))
		if far <= warnList && (named != far || more) || far > warnList && (named != warnList || !more) {
			t.Errorf("%d far topics: %q", far, warns[0])
		}
	}
}
