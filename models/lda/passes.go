package lda

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// tracker counts passes and forwards progress to the caller's hook, one call
// at a time.
type tracker struct {
	mu     sync.Mutex
	hook   func(Progress)
	start  time.Time
	passes int
	docs   int64
	// exact holds the exact totals of the last pass (checkpoint.go), which
	// statistics files keep.
	exact *implicit.Exact
	ckpt  *checkpointer // saves and resumes passes (checkpoint.go)
	// tokens and usable are the corpus's tokens and usable documents,
	// from the first pass's counts: the tokens set the sample of the
	// documents the third-moment pass sums cubes over; k above the usable
	// documents is refused, not split (fewerTopics).
	tokens, usable int64
	// sweep, when set, solves every k of FitK from each third-moment pass
	// (sweep.go).
	sweep *sweepSpectral
	// k is the model of a sweep the passes serve (Progress.K; 0: all).
	k int
	// emTap, when set, keeps the EM passes' samples from the third-moment
	// pass (Fit; em_sample.go).
	emTap *emTap
}

// third returns src as the third-moment pass reads it: keeping the EM
// samples when emTap is set.
func (t *tracker) third(src stream.DocSource) stream.DocSource {
	return t.emTap.source(src, t.tokens)
}

func newTracker(cfg Config) *tracker {
	return &tracker{hook: cfg.Progress, start: time.Now(), ckpt: newCheckpointer(cfg)}
}

// begin starts a pass and returns its number, after a collection (see
// collect).
func (t *tracker) begin() int {
	collect()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.passes++
	t.docs = 0
	return t.passes
}

func (t *tracker) report(pass int, stage string, docs int, done bool) {
	if t.hook == nil {
		return
	}
	t.send(func() Progress {
		t.docs += int64(docs)
		return Progress{Pass: pass, Stage: stage, Docs: t.docs, Done: done}
	})
}

// send calls the hook, one call at a time, with the progress next forms
// under the tracker's lock and the time since the fit began.
func (t *tracker) send(next func() Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := next()
	if p.K == 0 {
		p.K = t.k
	}
	p.Elapsed = time.Since(t.start)
	t.hook(p)
}

// collect runs a garbage collection between the stages of a fit. A pass over
// the data reads into its own set of batches and decoder buffers (a
// stream.FreeList and pools dropped with the pass, 40–90 MB at vocabulary
// 2,000 with two workers), which are garbage once it ends; while they are
// still uncollected, the next pass allocates a second set, or the solve its
// scratch, on top of them, and the peak RSS would depend on whether the
// collector happened to run in between. One forced cycle per stage costs a
// few milliseconds of CPU against seconds of pass; it is what makes the
// peak the same at n and 8n documents. Below collectMin of heap (live and
// not yet collected) it does nothing: a small fit has little to gain, and
// many small fits (tests, cross-validation) would pay a cycle per stage.
func collect() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() < collectMin {
		return
	}
	runtime.GC()
}

// collectMin is the heap below which collect skips its cycle.
const collectMin = 32 << 20

// pairPass runs one pass accumulating the counts, M̂1 and Ê2·Ω.
func pairPass(ctx context.Context, src stream.DocSource, omega mat.Matrix, cfg Config, track *tracker) (*implicit.PairAcc, error) {
	d, cols := omega.Dims()
	pass := track.begin()
	acc := implicit.NewPairAcc(d, cols)
	acc.Float32 = !cfg.float64Sums
	err := stage(ctx, passLabel(pass, "second-moment"), func(ctx context.Context) error {
		return track.exactPair(ctx, src, acc, omega, cfg.Workers, func(n int) { track.report(pass, "second-moment", n, false) })
	})
	if err != nil {
		return nil, err
	}
	track.tokens, track.usable = acc.Tokens, acc.Docs
	track.report(pass, "second-moment", 0, true)
	return acc, nil
}

// triplePass runs one pass accumulating the whitened statistics for w, the
// cubes over the sample cubes of the documents; with noPair, without the
// pair sums (the caller has Ê2·W: implicit.TripleAcc.NoPair).
func triplePass(ctx context.Context, src stream.DocSource, w *mat.Dense, cubes implicit.DocSample, noPair bool, cfg Config, track *tracker) (*implicit.TripleAcc, error) {
	d, k := w.Dims()
	pass := track.begin()
	acc := implicit.NewTripleAcc(d, k)
	if noPair {
		acc.SkipPair()
	}
	acc.KeepRows = cfg.Implicit
	acc.Float32 = cfg.tripleFloat32()
	acc.Cubes = cubes
	err := stage(ctx, passLabel(pass, "third-moment"), func(ctx context.Context) error {
		return track.exactTriple(ctx, track.third(src), acc, w, cfg.Workers, func(n int) { track.report(pass, "third-moment", n, false) })
	})
	if err != nil {
		return nil, err
	}
	track.report(pass, "third-moment", 0, true)
	return acc, nil
}

// stage runs f with the CPU profiler label stage=name, which the goroutines
// f starts inherit, so `go tool pprof -tagfocus stage=NAME` (or -tags)
// splits a profile of a fit (streamfit fit --cpuprofile) by pass and step.
// Without a profile running the label costs nothing measurable.
func stage(ctx context.Context, name string, f func(context.Context) error) error {
	var err error
	pprof.Do(ctx, pprof.Labels("stage", name), func(ctx context.Context) { err = f(ctx) })
	return err
}

// passLabel names pass number pass computing what in profiles (stage).
func passLabel(pass int, what string) string { return fmt.Sprintf("pass%d-%s", pass, what) }

// m2Times returns M2·Ω = Ê2·Ω − c·M̂1(M̂1ᵀΩ) from pair sums taken against Ω.
// With inPlace it overwrites the sums (acc.E2Omega) instead of allocating
// another d×cols matrix.
func m2Times(acc *implicit.PairAcc, coef float64, omega mat.Matrix, inPlace bool) (*mat.Dense, error) {
	d, cols := omega.Dims()
	var y *mat.Dense
	if inPlace {
		y = mat.NewDense(d, cols, acc.E2Omega)
	} else {
		y = mat.NewDense(d, cols, nil)
	}
	m1, err := acc.Mean(y)
	if err != nil {
		return nil, err
	}
	if coef != 0 {
		mo := make([]float64, cols)
		if sp, ok := omega.(*sketch.Sparse); ok {
			for i, mi := range m1 {
				cs, vs := sp.RowNZ(i)
				for q, c := range cs {
					mo[c] += mi * vs[q]
				}
			}
		} else {
			mat.NewVecDense(cols, mo).MulVec(omega.T(), mat.NewVecDense(d, m1))
		}
		floats.Scale(-coef, mo)
		for i, mi := range m1 {
			if mi != 0 {
				floats.AddScaled(y.RawRowView(i), mi, mo)
			}
		}
	}
	return y, nil
}
