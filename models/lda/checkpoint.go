package lda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// Exact passes.
//
// Every pass of a fit and of the statistics phases (Phase1Stats, PowerStats,
// Phase2Stats) adds its batches' partial sums as exact fixed-point totals
// (implicit.Exact), so the totals do not depend on how the data were split
// into shards or in which order shards are merged: the statistics of one
// shard, merged statistics of complementary shards (cut at batch
// boundaries) and Fit's own passes give the same bits, and so `fit` and
// `fit --from-stats` give the same model. The tracker keeps the exact totals
// of its last pass for the statistics file. A pass is resumable exactly
// (Checkpoint): the checkpoint holds the exact totals and the number of
// batches they hold, and the resumed pass skips those batches and adds the
// rest, ending with the totals of an uninterrupted pass.

// Checkpoint makes Fit save the statistics of its passes in Dir (see
// Config.Checkpoint): every pass while it runs, at most once every Every
// (default 30 s, negative: after every batch) as pass-N.partial.stats, and
// when it ends as pass-N.stats, each written atomically. A Fit with the same
// Checkpoint finds them and resumes: a finished pass is not run again, a
// partial one continues after the batches it holds, and the model is the
// one an uninterrupted fit gives, bit for bit. Checkpoints of another input
// or other settings are refused. With Third other than Explicit only the
// whitening passes are saved (the third-moment pass then reruns).
type Checkpoint struct {
	// Dir holds the checkpoint files ("": no checkpoints).
	Dir string
	// Key identifies what Config cannot: the input (e.g. its path, size and
	// modification time) and how it is cut into batches. Fit adds the
	// settings of Config that change the passes.
	Key   string
	Every time.Duration
}

// DefaultCheckpointEvery is the time between checkpoints within a pass.
const DefaultCheckpointEvery = 30 * time.Second

// checkpointer saves and resumes the passes of one fit.
type checkpointer struct {
	Checkpoint
	run string // Key and the settings, recorded in every file
}

// newCheckpointer returns the checkpointer of cfg (nil without one).
func newCheckpointer(cfg Config) *checkpointer {
	c := cfg.Checkpoint
	if c.Dir == "" {
		return nil
	}
	if c.Every == 0 {
		c.Every = DefaultCheckpointEvery
	}
	run := fmt.Sprintf("%s|k=%d alpha0=%g single=%t seed=%d oversample=%d power=%d exact-dim=%d third=%s f64=%t implicit=%t",
		c.Key, cfg.K, cfg.Alpha0, cfg.Single, cfg.Seed, cfg.Oversample, cfg.PowerIters, cfg.ExactDim, cfg.Third, cfg.float64Sums, cfg.Implicit)
	if cfg.CubeSample != 0 {
		run += fmt.Sprintf(" cube-sample=%d", cfg.CubeSample)
	}
	return &checkpointer{Checkpoint: c, run: run}
}

func (c *checkpointer) path(pass int, partial bool) string {
	if partial {
		return filepath.Join(c.Dir, fmt.Sprintf("pass-%d.partial.stats", pass))
	}
	return filepath.Join(c.Dir, fmt.Sprintf("pass-%d.stats", pass))
}

// load returns the saved statistics of pass (nil when there are none) and
// whether the pass had ended. basis is the fingerprint of the pass's
// projection, which the saved statistics must share.
func (c *checkpointer) load(pass int, basis uint64) (*implicit.TopicStats, bool, error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, false, err
	}
	// Temporary files of writes a kill interrupted are never read; remove them.
	if stale, err := filepath.Glob(filepath.Join(c.Dir, ".pass-*.tmp-*")); err == nil {
		for _, f := range stale {
			os.Remove(f)
		}
	}
	for _, done := range []bool{true, false} {
		path := c.path(pass, !done)
		st, err := implicit.ReadTopicStats(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("checkpoint: %w (remove it to start the pass over)", err)
		}
		switch h := st.Header; {
		case h.Run != c.run:
			return nil, false, fmt.Errorf("checkpoint %s is of another fit: %q, this fit %q (use another directory, or remove it to start over)", path, h.Run, c.run)
		case h.Basis != basis:
			return nil, false, fmt.Errorf("checkpoint %s: pass %d used another projection (basis %016x, this fit %016x); remove it to start over", path, pass, h.Basis, basis)
		case st.Exact == nil:
			return nil, false, fmt.Errorf("checkpoint %s holds no exact totals (a checkpoint of another version; remove it to start over)", path)
		}
		return st, done, nil
	}
	return nil, false, nil
}

// save writes the statistics of pass atomically.
func (c *checkpointer) save(pass int, done bool, st *implicit.TopicStats) error {
	st.Header.Run = c.run
	if err := implicit.WriteTopicStats(context.Background(), c.path(pass, !done), st); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if done {
		os.Remove(c.path(pass, true))
	}
	return nil
}

// exactPair runs acc's pass against omega over src with exact totals,
// resuming from and saving checkpoints when the fit has them.
func (t *tracker) exactPair(ctx context.Context, src stream.DocSource, acc *implicit.PairAcc, omega mat.Matrix, workers int, onBatch func(int)) error {
	return t.accPass(ctx, src, acc.Fingerprint(omega), workers, onBatch, accPass{
		restore: func(st *implicit.TopicStats) bool {
			if st.Pair == nil {
				return false
			}
			f32 := acc.Float32
			*acc = *st.Pair
			acc.Float32 = f32
			return true
		},
		exact: func(prev *implicit.Exact) (*implicit.Exact, error) { return implicit.NewPairExact(acc, omega, prev) },
		fill: func(st *implicit.TopicStats) {
			st.Header.D, st.Header.K, st.Header.Cols, st.Pair = acc.D, acc.Cols, acc.Cols, acc
		},
	})
}

// exactTriple runs acc's pass whitened by w over src, as exactPair.
func (t *tracker) exactTriple(ctx context.Context, src stream.DocSource, acc *implicit.TripleAcc, w *mat.Dense, workers int, onBatch func(int)) error {
	return t.accPass(ctx, src, acc.Fingerprint(w), workers, onBatch, accPass{
		restore: func(st *implicit.TopicStats) bool {
			if st.Triple == nil || st.Triple.NoPair != acc.NoPair {
				// (A checkpoint written with the pair sums when this fit
				// takes them from its power pass, or without them when
				// it does not, starts the pass over.)
				return false
			}
			f32, keep := acc.Float32, acc.KeepRows
			*acc = *st.Triple
			acc.Float32, acc.KeepRows = f32, keep
			return true
		},
		exact: func(prev *implicit.Exact) (*implicit.Exact, error) { return implicit.NewTripleExact(acc, w, prev) },
		fill: func(st *implicit.TopicStats) {
			st.Header.D, st.Header.K, st.Header.Cols, st.Triple = acc.D, acc.K, acc.K, acc
		},
	})
}

// accPass is one accumulator's pass with exact totals: exact makes them
// (continuing prev, a checkpoint's, when set), restore copies a
// checkpoint's accumulator into the pass's and reports whether it held
// one, and fill completes statistics with the accumulator.
type accPass struct {
	restore func(*implicit.TopicStats) bool
	exact   func(prev *implicit.Exact) (*implicit.Exact, error)
	fill    func(*implicit.TopicStats)
}

// accPass runs p against the projection whose fingerprint is basis.
func (t *tracker) accPass(ctx context.Context, src stream.DocSource, basis uint64, workers int, onBatch func(int), p accPass) error {
	st, done, err := t.resume(basis, p.restore)
	if err != nil {
		return err
	}
	e, err := p.exact(st.exact())
	if err != nil {
		return err
	}
	return t.exactPass(ctx, src, e, workers, onBatch, done, basis, p.fill)
}

// resumed is the checkpoint a pass resumes from (nil: none).
type resumed struct{ st *implicit.TopicStats }

// exact returns the checkpoint's exact totals (nil without a checkpoint).
func (r resumed) exact() *implicit.Exact {
	if r.st == nil {
		return nil
	}
	return r.st.Exact
}

// resume loads the checkpoint of the current pass, if the fit has one:
// restore copies its accumulator into the pass's and reports whether it
// held one. It returns the checkpoint and whether the pass had ended.
func (t *tracker) resume(basis uint64, restore func(*implicit.TopicStats) bool) (resumed, bool, error) {
	if t.ckpt == nil {
		return resumed{}, false, nil
	}
	st, done, err := t.ckpt.load(t.passes, basis)
	if err != nil || st == nil || !restore(st) {
		return resumed{}, false, err
	}
	return resumed{st}, done, nil
}

// exactPass runs the pass of e (unless done: a checkpoint held all of it),
// saving checkpoints while it runs and when it ends, of statistics that
// fill completes with the accumulator. The tracker keeps the exact totals
// of the pass (t.exact) for statistics.
func (t *tracker) exactPass(ctx context.Context, src stream.DocSource, e *implicit.Exact, workers int, onBatch func(int), done bool, basis uint64, fill func(*implicit.TopicStats)) error {
	t.exact = e
	c := t.ckpt
	if c == nil {
		return e.Pass(ctx, src.Docs, workers, onBatch, implicit.PassOptions{})
	}
	if done {
		return nil
	}
	pass := t.passes
	stats := func() *implicit.TopicStats {
		st := &implicit.TopicStats{Header: statsfile.Header{Model: "checkpoint", Phase: pass, Basis: basis, Shards: 1}}
		st.Exact = e
		fill(st)
		return st
	}
	opt := implicit.PassOptions{Skip: e.Batches, SnapshotEvery: max(0, c.Every),
		Snapshot: func(int64) error { return c.save(pass, false, stats()) }}
	if err := e.Pass(ctx, src.Docs, workers, onBatch, opt); err != nil {
		return err
	}
	return c.save(pass, true, stats())
}
