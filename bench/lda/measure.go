package lda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// Job is one measured run, meant to execute alone in a fresh process so
// that its peak RSS (VmHWM) is its own.
type Job struct {
	// Kind is "decode" (one plain pass: every batch decoded and handed to
	// the same consumers as a fit, which only count tokens) or "fit".
	Kind  string `json:"kind"`
	Data  string `json:"data"`
	Truth string `json:"truth,omitempty"`
	// Fit settings (zero: lda.Config defaults).
	K          int     `json:"k,omitempty"`
	Alpha0     float64 `json:"alpha0,omitempty"`
	Seed       uint64  `json:"seed,omitempty"`
	Oversample int     `json:"oversample,omitempty"`
	PowerIters int     `json:"power_iters,omitempty"`
	Restarts   int     `json:"restarts,omitempty"`
	Iters      int     `json:"iters,omitempty"`
	// Out, when set, is where the fitted model is written (as `streamfit
	// fit` does; the write is timed separately).
	Out string `json:"out,omitempty"`
}

// Result is what a Job measured.
type Result struct {
	// Seconds is the wall time of the pass or of lda.Fit.
	Seconds float64 `json:"seconds"`
	// CPUSeconds is the process's user+system time over the same span.
	CPUSeconds float64 `json:"cpu_seconds"`
	// WriteSeconds is the time to write the model file (fit with Out).
	WriteSeconds float64 `json:"write_seconds,omitempty"`
	// Stages splits a fit's wall time: each pass over the data, the
	// whitening between them, and the solve (moments, decomposition,
	// recovery) after the last.
	Stages map[string]float64 `json:"stages,omitempty"`
	// PeakRSS is the process's VmHWM, in bytes, at the end of the pass or
	// of the fit and the model's write (before reading the truth, which is
	// not part of a fit).
	PeakRSS int64 `json:"peak_rss"`
	Docs    int64 `json:"docs"`
	Tokens  int64 `json:"tokens"`
	NNZ     int64 `json:"nnz,omitempty"`
	Passes  int   `json:"passes,omitempty"`
	// Accuracy against the truth (fit with Truth).
	MeanL1   float64  `json:"mean_l1,omitempty"`
	MaxL1    float64  `json:"max_l1,omitempty"`
	Found    int      `json:"found,omitempty"`
	AlphaErr float64  `json:"alpha_err,omitempty"`
	SumAlpha float64  `json:"sum_alpha,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Err is the fit's error, if it failed.
	Err string `json:"err,omitempty"`
}

// Run executes j in this process.
func (j Job) Run(ctx context.Context) (*Result, error) {
	src, err := stream.Open(j.Data, stream.Options{})
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	res := &Result{}
	start, cpu := time.Now(), sysinfo.CPUTime()
	switch j.Kind {
	case "decode":
		err = decodePass(ctx, src, res)
	case "fit":
		err = j.fit(ctx, src, res)
	default:
		return nil, fmt.Errorf("unknown job kind %q", j.Kind)
	}
	if err != nil {
		return nil, err
	}
	if res.Seconds == 0 {
		res.Seconds = time.Since(start).Seconds()
		res.CPUSeconds = (sysinfo.CPUTime() - cpu).Seconds()
	}
	if res.PeakRSS == 0 {
		if res.PeakRSS, err = rss.Peak(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// decodePass reads src once with one consumer per CPU, as a fit's pass does,
// doing nothing with the batches but counting them.
func decodePass(ctx context.Context, src stream.DocSource, res *Result) error {
	var docs, tokens, nnz atomic.Int64
	err := stream.Each(ctx, src.Docs, runtime.GOMAXPROCS(0), func(_ int, b *stream.Docs) error {
		docs.Add(int64(b.Len()))
		tokens.Add(b.Tokens())
		nnz.Add(int64(b.NNZ()))
		return nil
	})
	res.Docs, res.Tokens, res.NNZ = docs.Load(), tokens.Load(), nnz.Load()
	return err
}

func (j Job) fit(ctx context.Context, src stream.DocSource, res *Result) error {
	start, cpu := time.Now(), sysinfo.CPUTime()
	var first, done []float64 // per pass: first batch seen, pass done
	m, err := lda.Fit(ctx, src, lda.Config{K: j.K, Alpha0: j.Alpha0, Seed: j.Seed, Oversample: j.Oversample,
		PowerIters: j.PowerIters, Restarts: j.Restarts, Iters: j.Iters, Progress: func(p lda.Progress) {
			t := p.Elapsed.Seconds()
			if len(first) < p.Pass {
				first = append(first, t)
			}
			if p.Done {
				done = append(done, t)
			}
		}})
	res.Seconds = time.Since(start).Seconds()
	res.CPUSeconds = (sysinfo.CPUTime() - cpu).Seconds()
	if len(done) == 2 && len(first) == 2 {
		res.Stages = map[string]float64{"pass1": done[0], "whitening": first[1] - done[0], "pass2": done[1] - first[1], "solve": res.Seconds - done[1]}
	}
	if errors.Is(err, lda.ErrTooManyTopics) {
		res.Err = err.Error()
		return nil
	}
	if err != nil {
		return err
	}
	res.Docs, res.Tokens, res.Passes = m.Fit.Docs, m.Fit.Tokens, m.Fit.Passes
	res.Warnings = m.Fit.Warnings
	for _, a := range m.Alpha {
		res.SumAlpha += a
	}
	if j.Out != "" {
		t := time.Now()
		if err := m.Write(j.Out); err != nil {
			return err
		}
		res.WriteSeconds = time.Since(t).Seconds()
	}
	if res.PeakRSS, err = rss.Peak(); err != nil {
		return err
	}
	if j.Truth != "" {
		truth, err := models.Read(j.Truth)
		if err != nil {
			return err
		}
		ev, err := models.Evaluate(m, truth)
		if err != nil {
			return err
		}
		res.MeanL1, res.MaxL1, res.Found, res.AlphaErr = ev.MeanL1, ev.MaxL1, ev.Found, ev.AlphaRelErr
	}
	return nil
}
