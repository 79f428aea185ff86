package lda

import (
	"bytes"
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// freeListDocs serves the documents of all in batches of rows taken from
// one free list per pass, as the file readers do, and counts the distinct
// batches a pass handed out: a pass whose batches come back to the list
// uses a few, one whose batches are never released a new one per batch.
type freeListDocs struct {
	all  *stream.Docs
	d    int
	rows int

	mu       sync.Mutex
	distinct []int // per pass
}

func (f *freeListDocs) Info() stream.Info {
	return stream.Info{Terms: f.d, Rows: int64(f.all.Len()), NNZ: int64(f.all.NNZ())}
}

func (f *freeListDocs) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		l := stream.NewFreeList(0)
		seen := map[*stream.Docs]bool{}
		defer func() {
			f.mu.Lock()
			f.distinct = append(f.distinct, len(seen))
			f.mu.Unlock()
		}()
		for lo := 0; lo < f.all.Len(); lo += f.rows {
			b := l.Get(int64(lo))
			for i := lo; i < min(lo+f.rows, f.all.Len()); i++ {
				b.AppendDoc(f.all.Doc(i))
			}
			seen[b] = true
			if !yield(b, nil) {
				return
			}
		}
	}
}

// TestSweepReleasesBatches: a batch the tee hands to several passes goes
// back to its source's free list once every pass has released it, so a
// pass of 200 batches uses a few; with sampling off (no copy of the
// documents kept) the shared EM passes read the source's batches so, and
// the models are those of RefineEM bit for bit.
func TestSweepReleasesBatches(t *testing.T) {
	c, _ := corpus(t, synth.LDAConfig{Docs: 4000, Vocab: 300, K: 4, Alpha0: 1, DocLen: 40, Seed: 13})
	all, err := stream.Collect(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	src := &freeListDocs{all: all, d: 300, rows: 20}
	// The tee itself: three passes that release what they read.
	err = teePass(context.Background(), src.Docs, 3, func(ctx context.Context, i int, batches func(context.Context) iter.Seq2[*stream.Docs, error]) error {
		for b, err := range batches(ctx) {
			if err != nil {
				return err
			}
			b.Release()
		}
		return nil
	})
	if err != nil || len(src.distinct) != 1 || src.distinct[0] > 3*teeBuffer+4 {
		t.Fatalf("teePass: %v; distinct batches %v of 200, want at most %d", err, src.distinct, 3*teeBuffer+4)
	}
	ks := []int{2, 4, 6}
	starts, err := FitK(context.Background(), src, ks, Config{Alpha0: 1, Seed: 1, Workers: 2}, SweepOptions{NoScore: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(0)
	cfg.Workers = 2
	cfg.EM.Passes = 3
	cfg.EM.Sample = -1
	var ms []*models.Model
	for _, m := range starts.Models {
		ms = append(ms, cloneModel(m))
	}
	src.distinct = nil
	shared, err := refineAll(context.Background(), src, ms, cfg, newTracker(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.distinct) == 0 {
		t.Fatal("the EM passes did not read the source")
	}
	for p, n := range src.distinct {
		if n > 40 {
			t.Errorf("EM pass %d: %d distinct batches of 200, want at most 40 (the others released and reused)", p+1, n)
		}
	}
	t.Logf("distinct batches per pass: %v", src.distinct)
	for i, m := range starts.Models {
		if !shared[i] {
			t.Fatalf("k=%d did not share the passes", m.K)
		}
		own := cloneModel(m)
		if err := RefineEM(context.Background(), src, own, cfg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(modelBytes(t, ms[i]), modelBytes(t, own)) {
			t.Errorf("k=%d: the shared EM passes over the source differ from its own", m.K)
		}
	}
}
