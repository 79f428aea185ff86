package lda

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
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
	for _, tc := range []struct {
		name string
		src  stream.DocSource
		cfg  Config
		want string
		is   error
	}{
		{"k≥d", small, Config{K: 50}, "lower k", nil},
		{"k=0", small, Config{K: 0}, "at least 1", nil},
		{"alpha0<0", small, Config{K: 3, Alpha0: -1}, "must be positive", nil},
		{"no docs", shortSrc, Config{K: 3}, "no usable documents", implicit.ErrNoDocs},
		{"too many topics", small, Config{K: 30}, "lower k", ErrTooManyTopics},
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
// the same input, seed and workers give an identical model.
func TestSkippedAndDeterministic(t *testing.T) {
	src, _ := corpus(t, synth.LDAConfig{Docs: 3000, Vocab: 400, K: 4, Alpha0: 1, DocLen: 40, Seed: 3})
	all, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	all.AppendDoc([]int32{7}, []int32{2}) // 2 tokens: skipped
	all.AppendDoc(nil, nil)               // empty: skipped
	mem := &stream.MemoryDocs{All: all, Terms: 400, BatchRows: 256}
	fit := func() (*models.Model, error) {
		return Fit(context.Background(), mem, Config{K: 4, Seed: 9, Workers: 2})
	}
	a, err := fit()
	if err != nil {
		t.Fatal(err)
	}
	b, err := fit()
	if err != nil {
		t.Fatal(err)
	}
	if a.Fit.Skipped != 2 || a.Fit.Docs != 3000 {
		t.Errorf("docs %d skipped %d, want 3000 and 2", a.Fit.Docs, a.Fit.Skipped)
	}
	a.Fit.Seconds, b.Fit.Seconds = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Error("two fits with the same seed and workers differ")
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
	m, err := Fit(context.Background(), src, Config{K: 4, Seed: 1, Progress: func(p Progress) {
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
	if want := []string{"second-moment", "second-moment", "third-moment"}; !reflect.DeepEqual(done, want) || m.Fit.Passes != 3 {
		t.Errorf("passes %v (%d), want %v", done, m.Fit.Passes, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Fit(ctx, src, Config{K: 4, Seed: 1, Progress: func(p Progress) {
		if p.Pass == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fit returned %v", err)
	}
}
