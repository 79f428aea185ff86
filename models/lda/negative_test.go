package lda

import (
	"context"
	"errors"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// headerDocs adds to every document of an LDA corpus the same h header words
// (new terms d, …, d+h−1), once each, as every e-mail carries "subject" and
// "from": words whose count does not vary between documents break the model,
// and their pair moment, lower than independent draws give, is a negative
// direction of M̂2 near M̂1 (−1/(2ℓ²) for one header word, α₀ = 1), as large
// as the topics' directions in documents of 50 words.
type headerDocs struct {
	stream.DocSource
	h int
}

func (s headerDocs) Info() stream.Info {
	info := s.DocSource.Info()
	info.Terms += s.h
	info.Vocab = nil
	return info
}

func (s headerDocs) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	d := s.DocSource.Info().Terms
	return func(yield func(*stream.Docs, error) bool) {
		for in, err := range s.DocSource.Docs(ctx) {
			var out *stream.Docs
			if in != nil {
				out = stream.NewDocs(in.Start)
				for i := range in.Len() {
					terms, counts := in.Doc(i)
					for j, t := range terms {
						out.Add(t, counts[j])
					}
					for h := range s.h {
						out.Add(int32(d+h), 1)
					}
					out.EndDoc()
				}
				in.Release()
			}
			if !yield(out, err) {
				return
			}
		}
	}
}

// withoutHeader evaluates m's topics against the truth over the LDA words
// only (the header words dropped and each topic renormalised).
func withoutHeader(t *testing.T, m *models.Model, truth *models.Model) *models.Evaluation {
	t.Helper()
	c := *m
	c.D, c.Topics = truth.D, nil
	for _, mu := range m.Topics {
		mu = append([]float64(nil), mu[:truth.D]...)
		models.ProjectSimplex(mu)
		c.Topics = append(c.Topics, mu)
	}
	ev, err := models.Evaluate(&c, truth)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestNegativeDirection is the robust start on a corpus whose second moment
// has negative directions as large as the topics' (one and two header
// words; see headerDocs): the first sketch's singular vectors take them
// into W, and a fit that whitened with them was refused ("1 of the k=10
// eigenvalues of the whitened second moment are not positive", as on real
// text). Fit now takes a power pass over the sketch's range and whitens
// with its positive Ritz vectors: the topics are as accurate as with the
// exact whitening (which takes M̂2's algebraically largest eigenpairs), and
// one warning says the data depart from the model. Without the power pass
// (PowerIters −1) the refusal says what would separate them.
func TestNegativeDirection(t *testing.T) {
	ctx := context.Background()
	lda, truth := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42})
	for _, h := range []int{1, 2} {
		src := headerDocs{lda, h}
		m, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1})
		if err != nil {
			t.Fatalf("%d header words: %v", h, err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		ev := withoutHeader(t, m, truth)
		ex, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, ExactDim: 2000})
		if err != nil {
			t.Fatal(err)
		}
		evx := withoutHeader(t, ex, truth)
		t.Logf("%d header words: mean ℓ1 %.4f (exact whitening %.4f), found %d, %d passes, warnings %q", h, ev.MeanL1, evx.MeanL1, ev.Found, m.Fit.Passes, m.Fit.Warnings)
		// pass 1, the power pass over the sketch's range (the first
		// documents showed the negative direction), the third-moment pass;
		// without the peek the third-moment pass meets it, and the power
		// pass and a second third-moment pass follow, for the same model.
		if m.Fit.Passes != 3 {
			t.Errorf("%d passes, want 3", m.Fit.Passes)
		}
		late, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, peek: peekOff})
		if err != nil {
			t.Fatal(err)
		}
		if late.Fit.Passes != 4 || !sameModel(m, late) {
			t.Errorf("%d header words: without the peek %d passes (want 4), same model %v", h, late.Fit.Passes, sameModel(m, late))
		}
		// Sampling error here is about 0.08 (the exact whitening's).
		if ev.Found != 10 || ev.MeanL1 > evx.MeanL1+0.01 {
			t.Errorf("%d header words: mean ℓ1 %.4f, found %d; exact whitening %.4f", h, ev.MeanL1, ev.Found, evx.MeanL1)
		}
		for _, a := range m.Alpha {
			if !(a > 0 && a <= 1) {
				t.Errorf("α̂ %v outside (0, α₀]", m.Alpha)
				break
			}
		}
		if len(m.Fit.Warnings) != 1 || !strings.Contains(m.Fit.Warnings[0], "depart from the model") || !strings.Contains(m.Fit.Warnings[0], "negative directions") {
			t.Errorf("warnings %q, want one saying how far the data are from the model", m.Fit.Warnings)
		}
		if h == 1 {
			// A requested power pass whitens from its Ritz values at once.
			pw, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, PowerIters: 1})
			if err != nil {
				t.Fatal(err)
			}
			if evp := withoutHeader(t, pw, truth); pw.Fit.Passes != 3 || evp.Found != 10 || evp.MeanL1 > evx.MeanL1+0.01 {
				t.Errorf("one power pass: %d passes, mean ℓ1 %.4f, found %d", pw.Fit.Passes, evp.MeanL1, evp.Found)
			}
		}
		// Without the power pass the sketch holds the negative directions:
		// the data support fewer spectral topics, and the fit still gives 10.
		np, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, PowerIters: -1, EM: EM{Passes: -1}})
		if err != nil || np.K != 10 || !strings.Contains(strings.Join(np.Fit.Warnings, "; "), "spectral topics, not k=10") {
			t.Errorf("%d header words without the power pass: %v", h, err)
		} else {
			t.Logf("%d header words without the power pass: %q", h, np.Fit.Warnings)
		}
	}
}

// sameModel reports whether a and b have the same topics and weights, bit
// for bit.
func sameModel(a, b *models.Model) bool {
	if len(a.Topics) != len(b.Topics) || !slices.Equal(a.Alpha, b.Alpha) {
		return false
	}
	for i := range a.Topics {
		if !slices.Equal(a.Topics[i], b.Topics[i]) {
			return false
		}
	}
	return true
}

// TestPeekFalseAlarm: a peek that says W holds a negative direction where
// the whole data show none (forced here on a clean corpus) costs the power
// pass, whose sums then show W positive definite: Fit keeps W and gives
// the model it gives without the peek, one pass later, whatever the
// workers.
func TestPeekFalseAlarm(t *testing.T) {
	ctx := context.Background()
	src, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42})
	want, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, peek: peekOff})
	if err != nil {
		t.Fatal(err)
	}
	auto, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if auto.Fit.Passes != want.Fit.Passes || !sameModel(auto, want) {
		t.Errorf("clean corpus: the peek changed the fit (%d passes against %d)", auto.Fit.Passes, want.Fit.Passes)
	}
	for _, workers := range []int{1, 3} {
		got, err := Fit(ctx, src, Config{K: 10, Alpha0: 1, Seed: 1, Workers: workers, peek: peekForce})
		if err != nil {
			t.Fatal(err)
		}
		if got.Fit.Passes != want.Fit.Passes+1 || !sameModel(got, want) {
			t.Errorf("workers %d: a false alarm gave %d passes (want %d) and the same model: %v", workers, got.Fit.Passes, want.Fit.Passes+1, sameModel(got, want))
		}
	}
}

// TestNegativeDirectionStats: the statistics route meets the same negative
// direction as Fit and, given the power statistics Fit's extra pass
// computes, gives Fit's model (the power pass's Q spans the same range; the
// batches' float32 partial sums differ in rounding only).
func TestNegativeDirectionStats(t *testing.T) {
	ctx := context.Background()
	lda, _ := corpus(t, synth.LDAConfig{Docs: 20000, Vocab: 1000, K: 10, Alpha0: 1, DocLen: 50, Seed: 42})
	src := headerDocs{lda, 1}
	cfg := Config{K: 10, Alpha0: 1, Seed: 1}
	fit, err := Fit(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := Phase1Stats(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Phase2Stats(ctx, src, p1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FitStats(ctx, p2, cfg)
	if !errors.Is(err, ErrTooManyTopics) || !strings.Contains(err.Error(), "power statistics") {
		t.Fatalf("phase 2 from the first sketch: %v, want the advice to compute the power statistics", err)
	}
	pw, err := PowerStats(ctx, src, p1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p2, err = Phase2Stats(ctx, src, pw, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := FitStats(ctx, p2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := range m.Topics {
		worst = max(worst, models.L1(m.Topics[i], fit.Topics[i]))
	}
	t.Logf("statistics route vs Fit: topics differ by ℓ1 ≤ %.2g; warnings %q", worst, m.Fit.Warnings)
	if worst > 1e-3 || len(m.Fit.Warnings) != len(fit.Fit.Warnings) {
		t.Errorf("statistics route: topics differ from Fit's by ℓ1 %.3g, warnings %q vs %q", worst, m.Fit.Warnings, fit.Fit.Warnings)
	}
}

// TestRefusalNamesKThatRuns: k above the usable documents is refused,
// naming the largest k that runs, and a fit with that k runs; where the
// second moment has fewer than k positive directions but there are enough
// documents (a small vocabulary whitened exactly, or a randomized
// whitening), the fit gives k topics with a warning instead.
func TestRefusalNamesKThatRuns(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ d, docs, k int }{{60, 8, 12}, {60, 200, 40}, {1000, 8, 12}} {
		src, _ := corpus(t, synth.LDAConfig{Docs: int64(tc.docs), Vocab: tc.d, K: 3, Alpha0: 1, DocLen: 40, Seed: 5})
		m, err := Fit(ctx, src, Config{K: tc.k, Alpha0: 1, Seed: 1})
		if tc.docs >= tc.k {
			if err != nil || m.K != tc.k || m.Validate() != nil {
				t.Fatalf("d=%d, %d documents, k=%d: %v, want a model of k topics", tc.d, tc.docs, tc.k, err)
			}
			if w := strings.Join(m.Fit.Warnings, "; "); !strings.Contains(w, "spectral topics, not k=") {
				t.Errorf("d=%d, %d documents, k=%d: warnings %q, want one saying how many topics the data support", tc.d, tc.docs, tc.k, w)
			}
			continue
		}
		if !errors.Is(err, ErrTooManyTopics) {
			t.Fatalf("d=%d, %d documents, k=%d: %v, want a refusal naming k", tc.d, tc.docs, tc.k, err)
		}
		t.Log(err)
		if !strings.Contains(err.Error(), "lower k to "+strconv.Itoa(tc.docs)) {
			t.Fatalf("refusal %q does not name k=%d", err, tc.docs)
		}
		m, err = Fit(ctx, src, Config{K: tc.docs, Alpha0: 1, Seed: 1})
		if err != nil {
			t.Fatalf("d=%d, %d documents: the named k=%d does not run: %v", tc.d, tc.docs, tc.docs, err)
		}
		if err := m.Validate(); err != nil || m.K != tc.docs {
			t.Fatalf("k=%d: model k=%d, %v", tc.docs, m.K, err)
		}
	}
}

// TestPeekHead: the first documents pass 1 keeps for the peek are exactly
// those a resumed fit reads again (headDocs), within peekDocs documents
// and peekEntries entries, so both give the peek the same answer; a pass
// left early keeps nothing.
func TestPeekHead(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		docs    int64
		docLen  float64
		batch   int
		wantMax int
	}{
		{20000, 50, 1000, peekDocs},   // the document cap, across batches
		{3000, 50, 4096, 3000},        // a small corpus: all of it
		{9000, 400, 700, peekEntries}, // the entry cap
	} {
		src, _ := corpus(t, synth.LDAConfig{Docs: c.docs, Vocab: 1000, K: 5, Alpha0: 1, DocLen: c.docLen, Seed: 3, BatchRows: c.batch})
		keep := &headKeeper{DocSource: src}
		for b, err := range keep.Docs(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		var read *stream.Docs
		var all head
		for b, err := range headDocs(src, peekDocs, peekEntries)(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			read = all.take(read, b, math.MaxInt, math.MaxInt)
		}
		k := keep.kept
		if k == nil || read == nil || k.Len() != read.Len() || !slices.Equal(k.Offsets, read.Offsets) ||
			!slices.Equal(k.Terms, read.Terms) || !slices.Equal(k.Counts, read.Counts) {
			t.Fatalf("%d documents: kept and read heads differ", c.docs)
		}
		if c.wantMax == peekEntries {
			if n := k.NNZ(); n > peekEntries || n < peekEntries-2000 {
				t.Errorf("entry cap: kept %d entries, want just under %d", n, peekEntries)
			}
		} else if k.Len() != c.wantMax {
			t.Errorf("%d documents: kept %d, want %d", c.docs, k.Len(), c.wantMax)
		}
		early := &headKeeper{DocSource: src}
		for b := range early.Docs(ctx) {
			b.Release()
			break
		}
		if early.kept != nil {
			t.Error("a pass left early kept documents")
		}
	}
}
