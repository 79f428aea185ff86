package lda

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// warmCorpus is sampledCorpus with passes on the sample until the cap
// leaves one over every document: Fit's passes 3–6 on the sample (in
// halves, from the copy the third-moment pass kept), 7 over every document.
func warmCorpus(t *testing.T) (*synth.Corpus, Config) {
	cc, cfg := sampledCorpus()
	cfg.EM.Tol = 1e-12
	cfg.EM.Passes = 5
	src, _ := corpus(t, cc)
	return src, cfg
}

// fitNoTime fits src with cfg and clears the wall time.
func fitNoTime(t *testing.T, ctx context.Context, src *synth.Corpus, cfg Config) (*models.Model, error) {
	t.Helper()
	m, err := Fit(ctx, src, cfg)
	if m != nil {
		m.Fit.Seconds = 0
	}
	return m, err
}

// sameFit reports whether a and b are the same model and fit record, bit
// for bit.
func sameFit(a, b *models.Model) bool {
	return reflect.DeepEqual(a.Topics, b.Topics) && reflect.DeepEqual(a.Alpha, b.Alpha) && reflect.DeepEqual(a.Fit, b.Fit)
}

// readEMCheckpoint reads the EM checkpoint at path: its header, its
// floats (α, topics and, with Prev, those before the last M-step) and
// the warm starts that follow.
func readEMCheckpoint(t *testing.T, path string) (emHeader, []float64, []byte) {
	t.Helper()
	var h emHeader
	var vs []float64
	var warm []byte
	if _, err := readCheckpoint(path, &h, func(r io.Reader) error {
		n := h.K + h.K*h.D
		if h.Prev {
			n *= 2
		}
		vs = make([]float64, n)
		if err := readFloats(r, vs); err != nil {
			return err
		}
		var err error
		warm, err = io.ReadAll(r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return h, vs, warm
}

// TestWarmStartsCheckpoint checks that the sample's warm starts survive
// checkpoints: a sampled fit with checkpoints (saved after every batch)
// gives the model of the same fit without them (2 workers), with 1 and 3;
// the EM checkpoint between two passes on the sample holds the starts the
// last pass ended with (after a pass on the sample's first half, its
// documents'; after one on the whole sample, nearly all); and those starts are
// used: a fit resumed from that checkpoint with them emptied gives another
// model (cold starts), while with them intact it gives the uninterrupted
// model.
func TestWarmStartsCheckpoint(t *testing.T) {
	src, cfg := warmCorpus(t)
	ctx := context.Background()
	ref, err := fitNoTime(t, ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := ref.Fit.EM.Sample; s == nil || s.Passes != 4 || s.HalfPasses != 2 || ref.Fit.EM.Passes != 5 || s.FullGain == nil {
		t.Fatalf("EM record %+v, sample %+v: want 4 passes on the sample (2 on its first half), the learning curve, 1 over all", ref.Fit.EM, s)
	}
	for _, workers := range []int{1, 3} {
		c := cfg
		c.Workers = workers
		c.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "corpus", Every: -1}
		var saved []int // the warm starts' documents with starts in em.ckpt, at each sample pass's end
		c.Progress = func(p Progress) {
			if !strings.HasPrefix(p.Stage, "em-sample") || !p.Done || p.Pass < 4 {
				return
			}
			// em.ckpt is of the pass before this one.
			h, _, warm := readEMCheckpoint(t, filepath.Join(c.Checkpoint.Dir, "em.ckpt"))
			if h.Version != emCkptVersion || h.WarmDocs != 1018 {
				t.Errorf("%d workers, pass %d: em.ckpt of version %d with the starts of %d documents, want the sample's 1018", workers, p.Pass, h.Version, h.WarmDocs)
			}
			with, held := 0, 0
			for i, d := 0, 0; i < len(warm); i, d = i+1+8*int(warm[i]), d+1 {
				switch {
				case d >= h.WarmDocs:
					held++
				case warm[i] > 0:
					with++
				}
			}
			if held != h.HeldWarmDocs || held == 0 {
				t.Errorf("%d workers, pass %d: em.ckpt holds the warm starts of %d held-out documents, its header says %d", workers, p.Pass, held, h.HeldWarmDocs)
			}
			saved = append(saved, with)
		}
		m, err := fitNoTime(t, ctx, src, c)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFit(m, ref) {
			t.Errorf("%d workers with checkpoints: the model differs from the one without", workers)
		}
		t.Logf("%d workers: the sample's documents with warm starts in em.ckpt after its passes 1–3 (1–2 on its first half): %v", workers, saved)
		if len(saved) != 3 {
			t.Fatalf("%d workers: em.ckpt read after %d passes on the sample, want 3", workers, len(saved))
		}
		for i, n := range saved {
			if i < 2 && (n < 300 || n > 700) || i == 2 && n < 900 {
				t.Errorf("%d workers: %v documents with warm starts in em.ckpt, want about half of the sample's 1018 after the passes on its first half, nearly all after one on the whole sample", workers, saved)
			}
		}
	}

	// Stopped between the second and third pass on the sample: em.ckpt
	// holds the second's ends.
	c := cfg
	c.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "corpus", Every: -1}
	stopBetween := func(p Progress) bool { return p.Stage == "em-sample-half" && p.Pass == 4 && p.Done }
	cancelled(t, src, c, stopBetween)
	path := filepath.Join(c.Checkpoint.Dir, "em.ckpt")
	h, vs, warm := readEMCheckpoint(t, path)
	if h.WarmDocs == 0 || len(warm) <= h.WarmDocs || len(h.Bounds) != 2 {
		t.Fatalf("em.ckpt after 2 passes on the sample: %+v, %d bytes of warm starts", h, len(warm))
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(h emHeader, warm []byte) {
		if err := writeCheckpoint(path, h, func(w io.Writer) error {
			if err := writeFloats(w, vs); err != nil {
				return err
			}
			_, err := w.Write(warm)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The starts emptied (every document's E-step cold, the held-out
	// sample's too): another model.
	rewrite(h, make([]byte, h.WarmDocs+h.HeldWarmDocs))
	cold, err := fitNoTime(t, ctx, src, c)
	if err != nil {
		t.Fatal(err)
	}
	if sameFit(cold, ref) {
		t.Error("resumed with the warm starts emptied, the model is the one with them: they are not used")
	}
	// An older streamfit's checkpoint (no version, no starts) is refused
	// while the passes on the sample go on.
	old := h
	old.Version, old.WarmDocs, old.WarmKeys, old.HeldWarmDocs, old.HeldWarmKeys = 0, 0, 0, 0, 0
	os.RemoveAll(c.Checkpoint.Dir)
	cancelled(t, src, c, stopBetween)
	rewrite(old, nil)
	if _, err := Fit(ctx, src, c); err == nil || !strings.Contains(err.Error(), "older streamfit") || !strings.Contains(err.Error(), path) {
		t.Errorf("em.ckpt without warm starts resumed: %v", err)
	}
	// So is one of version 2, whose passes all ran on the whole sample.
	old = h
	old.Version = 2
	rewrite(old, warm)
	if _, err := Fit(ctx, src, c); err == nil || !strings.Contains(err.Error(), "whole sample") || !strings.Contains(err.Error(), path) {
		t.Errorf("em.ckpt of version 2 resumed: %v", err)
	}
	// Intact, the uninterrupted model.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := fitNoTime(t, ctx, src, c); err != nil || !sameFit(m, ref) {
		t.Errorf("resumed between two passes on the sample: %v, the model differs from the uninterrupted one", err)
	}
}

// cancelled runs Fit(src, cfg) until stop says to cancel it, and checks
// that it ended by the cancellation.
func cancelled(t *testing.T, src *synth.Corpus, cfg Config, stop func(Progress) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Progress = func(p Progress) {
		if stop(p) {
			cancel()
		}
	}
	if _, err := Fit(ctx, src, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("fit to be cancelled: %v", err)
	}
}

// TestWarmStartsResume stops a checkpointed sampled fit at several points
// — within a pass on the sample's first half, between those and the
// passes on the whole sample, within either half of a pass on the whole
// sample (the partial pass saved
// after every batch, with the warm starts of the documents committed),
// between two passes, within the last pass on the sample (whose halves the
// learning curve reads), within the pass over every document — and
// resumes it with 1 and 3 workers: the model is that of the uninterrupted
// fit without checkpoints, bit for bit, and a resumed pass skips the
// batches the partial pass holds.
func TestWarmStartsResume(t *testing.T) {
	src, cfg := warmCorpus(t)
	ref, err := fitNoTime(t, context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const sample = 1018 // the sample's documents
	for _, c := range []struct {
		name    string
		pass    int   // stopped in this pass
		docs    int64 // after this many of its documents (0: at its end)
		half    int   // the half em.partial holds (-1: none)
		halves  bool  // the pass runs in halves
		workers int
	}{
		{"first pass, on the sample's first half", 3, 200, 0, false, 1},
		{"second pass on the sample's first half", 4, 300, 0, false, 3},
		{"between the passes on the first half and on the whole sample", 4, 0, -1, false, 3},
		{"first pass on the whole sample, second half", 5, 700, 1, true, 3},
		{"last pass on the sample, first half", 6, 300, 0, true, 3},
		{"last pass on the sample, second half", 6, 900, 1, true, 1},
		{"pass over every document", 7, 3000, 0, false, 3},
	} {
		cc := cfg
		cc.Checkpoint = Checkpoint{Dir: t.TempDir(), Key: "corpus", Every: -1}
		cancelled(t, src, cc, func(p Progress) bool {
			return p.Pass == c.pass && (c.docs == 0 && p.Done || c.docs > 0 && p.Docs >= c.docs)
		})
		var h emPartial
		_, err := readCheckpoint(filepath.Join(cc.Checkpoint.Dir, "em.partial"), &h, func(io.Reader) error { return nil })
		switch {
		case err != nil:
			t.Fatal(err)
		case c.half < 0 && h.Pass != 0:
			t.Errorf("%s: em.partial of pass %d left between passes", c.name, h.Pass)
		case c.half >= 0 && (h.Pass != c.pass-2 || h.Half != c.half || h.Halves != c.halves || (h.WarmDocs == sample) != (c.pass < 7)):
			t.Errorf("%s: em.partial %+v, want EM pass %d, half %d", c.name, h, c.pass-2, c.half)
		}
		cc.Workers = c.workers
		var read int64 // documents the resumed pass read
		cc.Progress = func(p Progress) {
			if p.Pass == c.pass && !p.Done {
				read = p.Docs
			}
		}
		m, err := fitNoTime(t, context.Background(), src, cc)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFit(m, ref) {
			t.Errorf("%s, resumed with %d workers: the model differs from the uninterrupted fit's", c.name, c.workers)
		}
		if c.docs > 0 && read > (map[bool]int64{true: sample, false: 6000}[c.pass < 7])-c.docs+200 {
			t.Errorf("%s: the resumed pass read %d documents, want the batches after the saved %d skipped", c.name, read, c.docs)
		}
	}
}

// TestWarmStartsFile checks the warm starts' encoding: what write writes
// read reads back, the documents left out keeping theirs, and a document
// with more starts than its room is refused.
func TestWarmStartsFile(t *testing.T) {
	src, _ := warmCorpus(t)
	var batches []*stream.Docs
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b.Clone())
		if len(batches) == 3 {
			break
		}
	}
	w := newWarmStarts(batches)
	for i := range w.cur.n {
		lo, hi := w.off[i], w.off[i+1]
		w.cur.n[i] = uint8(i % int(hi-lo+1))
		for e := lo; e < hi; e++ {
			w.cur.top[e], w.cur.cnt[e] = int32(e%7), float32(e)/3
		}
	}
	var buf bytes.Buffer
	if err := w.write(&buf, &w.cur, func(i int) bool { return i%3 != 0 }); err != nil {
		t.Fatal(err)
	}
	r := cloneWarm(w)
	for i := range r.next.n {
		r.next.n[i] = 1
	}
	held, err := r.read(bytes.NewReader(buf.Bytes()), &r.next)
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.cur.n {
		want := w.cur.n[i]
		if i%3 == 0 {
			want = 1
		}
		lo := w.off[i]
		if held[i] != (i%3 != 0) || r.next.n[i] != want ||
			held[i] && !reflect.DeepEqual(r.next.top[lo:lo+int32(want)], w.cur.top[lo:lo+int32(want)]) {
			t.Fatalf("document %d: held %t, %d starts, want %d", i, held[i], r.next.n[i], want)
		}
	}
	bad := buf.Bytes()
	bad[1] = warmTopics + 1 // document 1 (document 0 is left out)
	if _, err := r.read(bytes.NewReader(bad), &r.next); err == nil || !strings.Contains(err.Error(), "room") {
		t.Errorf("a document with more starts than its room: %v", err)
	}
}
