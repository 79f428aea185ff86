package lda

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// heapSampler records the peak of the live heap (runtime/metrics /gc/heap/live:bytes, the
// bytes the last GC found reachable: garbage awaiting collection does not count) sampled
// every few milliseconds while a fit runs.
type heapSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func sampleHeap() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{})}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Peak stops sampling and returns the peak in bytes.
func (h *heapSampler) Peak() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak
}

// BenchmarkFitLDA is the performance target of issue 3: 200,000 documents,
// vocabulary 10,000, k=50, α₀=1, length 200 (≈38M non-zeros), generated on the
// fly by three passes of the synthetic source.
//
//	go test ./models/lda/ -run '^$' -bench FitLDA -benchtime 1x
func BenchmarkFitLDA(b *testing.B) {
	benchFit(b, synth.LDAConfig{Docs: 200000, Vocab: 10000, K: 50, Alpha0: 1, DocLen: 200, Seed: 7}, Config{K: 50, Seed: 1})
}

func benchFit(b *testing.B, cc synth.LDAConfig, fc Config) {
	src, truth := corpus(b, cc)
	for b.Loop() {
		h := sampleHeap()
		start, cpu := time.Now(), cpuTime()
		m, err := Fit(context.Background(), src, fc)
		sec := time.Since(start).Seconds()
		cpuSec := (cpuTime() - cpu).Seconds()
		peak := h.Peak()
		if err != nil {
			b.Fatal(err)
		}
		ev, err := models.Evaluate(m, truth)
		if err != nil {
			b.Fatal(err)
		}
		we := m.Fit.WhitenedM2Eigenvalues
		b.Logf("max ℓ1 %.3f, α rel err %.3f, whitened M2 eigenvalues in [%.4f, %.4f], passes %d",
			ev.MaxL1, ev.AlphaRelErr, we[len(we)-1], we[0], m.Fit.Passes)
		b.ReportMetric(ev.MeanL1, "mean-l1")
		b.ReportMetric(float64(ev.Found), "found")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		b.ReportMetric(sec, "s/fit")
		b.ReportMetric(cpuSec, "cpu-s/fit")
		b.ReportMetric(float64(m.Fit.Tokens)/sec, "tokens/s")
	}
}

// cpuTime is the process's user+system CPU time: on a shared machine it is a
// steadier measure of work than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFitLDASmall is a quicker k=50 case (50,000 documents) for iterating.
func BenchmarkFitLDASmall(b *testing.B) {
	benchFit(b, synth.LDAConfig{Docs: 50000, Vocab: 10000, K: 50, Alpha0: 1, DocLen: 200, Seed: 7}, Config{K: 50, Seed: 1})
}

// BenchmarkFitLDAVocab100k measures memory for a large vocabulary (the goal
// is vocabulary 100,000 with k=100 under 1 GB). Memory does not depend on the
// number of documents, so a small corpus suffices (accuracy is not the point).
//
//	go test ./models/lda/ -run '^$' -bench Vocab100k -benchtime 1x
func BenchmarkFitLDAVocab100k(b *testing.B) {
	src, _ := corpus(b, synth.LDAConfig{Docs: 10000, Vocab: 100000, K: 100, Alpha0: 1, DocLen: 200, Seed: 7})
	for b.Loop() {
		h := sampleHeap()
		// The decomposition (k×k×k, solver's time) does not change the peak,
		// so it runs with one start and two iterations here.
		_, err := Fit(context.Background(), src, Config{K: 100, Seed: 1, Restarts: 1, Iters: 2})
		peak := h.Peak()
		// 10,000 documents do not support 100 topics over 100,000 words, so
		// the fit may stop at the decomposition, after every pass has run.
		if err != nil && !errors.Is(err, ErrTooManyTopics) {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	}
}

// BenchmarkDecodePass is one plain pass over the BenchmarkFitLDA corpus with
// the same workers and nothing computed: the unit in which a fit's time is
// quoted (fit time ÷ this = passes' worth of reading).
func BenchmarkDecodePass(b *testing.B) {
	src, _ := corpus(b, synth.LDAConfig{Docs: 200000, Vocab: 10000, K: 50, Alpha0: 1, DocLen: 200, Seed: 7})
	for b.Loop() {
		var tokens [8]int64
		err := stream.Each(context.Background(), src.Docs, runtime.GOMAXPROCS(0), func(w int, d *stream.Docs) error {
			tokens[w%len(tokens)] += d.Tokens()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
