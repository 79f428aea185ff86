package lda

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// part is documents lo..hi−1 of src, in batches of 512.
func part(src *stream.MemoryDocs, lo, hi int) *stream.MemoryDocs {
	d := &stream.Docs{Offsets: []int{0}}
	for i := lo; i < hi; i++ {
		d.AppendDoc(src.All.Doc(i))
	}
	return &stream.MemoryDocs{All: d, Terms: src.Terms, BatchRows: 512}
}

// sweepJSON is what two sweeps compare: every model.json without its
// timing, and the scores.
func sweepJSON(t *testing.T, sw *Sweep) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, m := range sw.Models {
		c := *m
		c.ClearTiming()
		if err := json.NewEncoder(&buf).Encode(&c); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.NewEncoder(&buf).Encode(sw.Scores); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSweepFromStats: the sweep from the merged phase-2 statistics of its
// largest k, computed over two shards cut at a batch boundary, with the EM
// passes over the documents, gives FitK's models and scores (with
// SharedStart, as the statistics hold the largest k's passes only) bit for bit,
// with the exact whitening and the randomized one, whatever the workers;
// statistics of another k, and scores without held-out documents, are
// refused.
func TestSweepFromStats(t *testing.T) {
	ctx := context.Background()
	for _, vocab := range []int{200, 500} {
		// 4096 documents in two shards of 2048 (4 batches of 512 each),
		// and 512 more of the same topics held out.
		cc := synth.LDAConfig{Docs: 4608, Vocab: vocab, K: 8, Alpha0: 1, DocLen: 80, Seed: 11}
		_, all, held, _ := shards(t, cc, 4096.0/4608)
		a, b := part(all, 0, 2048), part(all, 2048, 4096)
		ks := []int{3, 5, 8}
		cfg := DefaultConfig(0)
		cfg.EM.Passes = 4
		cfg.Workers = 2
		opt := SweepOptions{HeldOut: held, SharedStart: true}
		direct, err := FitK(ctx, all, ks, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := sweepJSON(t, direct)
		// The statistics route takes the power pass where FitK took one
		// (its spectral passes beyond the two).
		spectral := direct.Passes
		for _, s := range direct.Scores {
			spectral = min(spectral, direct.Passes-s.EMPasses)
		}
		sc := cfg
		sc.K = 8
		_, st := powerRoute(t, sc, spectral-2, a, b)
		for _, w := range []int{1, 3} {
			c := cfg
			c.Workers = w
			sw, err := FitKStats(ctx, st, all, ks, c, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sweepJSON(t, sw), want) {
				t.Errorf("vocabulary %d, %d workers: the sweep from statistics differs from FitK", vocab, w)
			}
			if sw.Recommended != direct.Recommended || sw.Passes != direct.Passes {
				t.Errorf("vocabulary %d: recommended %d in %d passes, FitK %d in %d", vocab, sw.Recommended, sw.Passes, direct.Recommended, direct.Passes)
			}
		}
		t.Logf("vocabulary %d: %d passes (%d spectral), recommended k=%d", vocab, direct.Passes, spectral, direct.Recommended)
		// No documents: the spectral fits, scored by nothing.
		spec, err := FitKStats(ctx, st, nil, ks, cfg, SweepOptions{NoScore: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range spec.Models {
			if m.K != ks[i] || m.Fit.EM != nil {
				t.Errorf("k=%d without documents: a model of %d topics, EM %v", ks[i], m.K, m.Fit.EM)
			}
		}
		for _, bad := range []struct {
			ks   []int
			src  stream.DocSource
			opt  SweepOptions
			want string
		}{
			{[]int{3, 5}, all, opt, "largest k"},
			{[]int{3, 5, 8, 9}, all, opt, "largest k"},
			{ks, all, SweepOptions{}, "held out"},
			{ks, nil, opt, "held out"},
		} {
			if _, err := FitKStats(ctx, st, bad.src, bad.ks, cfg, bad.opt); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("ks %v: %v, want an error about %q", bad.ks, err, bad.want)
			}
		}
	}
}

// TestSweepFromStatsEach: statistics of every k's own (each k's phases as
// its own fit takes them: the power phase where Fit takes a power pass),
// computed over two shards and merged, give with the EM passes over the
// documents the models and scores of FitK's default (each k's own start)
// bit for bit, on a vocabulary whitened by a sketch, whatever the workers;
// statistics of another k than the one they are given for are refused.
func TestSweepFromStatsEach(t *testing.T) {
	ctx := context.Background()
	cc := synth.LDAConfig{Docs: 4608, Vocab: 700, K: 8, Alpha0: 1, DocLen: 80, Seed: 13}
	_, all, held, _ := shards(t, cc, 4096.0/4608)
	a, b := part(all, 0, 2048), part(all, 2048, 4096)
	ks := []int{3, 5, 8}
	cfg := DefaultConfig(0)
	cfg.EM.Passes = 4
	cfg.Workers = 2
	opt := SweepOptions{HeldOut: held}
	direct, err := FitK(ctx, all, ks, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	var sts []*implicit.TopicStats
	for i, k := range ks {
		if k != ks[len(ks)-1] && direct.Scores[i].SharedStart {
			t.Fatalf("k=%d: a shared start over a sketched vocabulary", k)
		}
		sc := cfg
		sc.K, sc.EM = k, EM{}
		alone, err := Fit(ctx, all, sc)
		if err != nil {
			t.Fatal(err)
		}
		_, st := powerRoute(t, sc, alone.Fit.Passes-2, a, b)
		sts = append(sts, st)
		t.Logf("k=%d: %d spectral passes", k, alone.Fit.Passes)
	}
	scores := func(sw *Sweep) []byte {
		var buf bytes.Buffer
		for _, m := range sw.Models {
			buf.Write(modelBytes(t, m))
		}
		js, err := json.Marshal(sw.Scores)
		if err != nil {
			t.Fatal(err)
		}
		return append(buf.Bytes(), js...)
	}
	want := scores(direct)
	for _, w := range []int{1, 3} {
		c := cfg
		c.Workers = w
		// Given in another order than ks: each file names its k.
		sw, err := FitKStatsEach(ctx, []*implicit.TopicStats{sts[2], sts[0], sts[1]}, all, []int{8, 3, 5}, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(scores(sw), want) || sw.Passes != direct.Passes || sw.Recommended != direct.Recommended {
			t.Errorf("%d workers: the sweep from each k's statistics differs from FitK (passes %d, %d; recommended %d, %d)", w, sw.Passes, direct.Passes, sw.Recommended, direct.Recommended)
		}
	}
	// The largest k's statistics alone start the smaller k elsewhere.
	sharedSw, err := FitKStats(ctx, sts[2], all, ks, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(scores(sharedSw), want) {
		t.Error("the shared start gives the models of each k's own: the comparison cannot tell them apart")
	}
	if _, err := FitKStatsEach(ctx, sts, all, []int{3, 8, 5}, cfg, opt); err == nil || !strings.Contains(err.Error(), "are of k=") {
		t.Errorf("statistics given for another k: %v", err)
	}
}
