package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("stats", "compute one shard's mergeable statistics of a fit phase (lda/topic)", runStats)
}

// statsOut is where stats and merge print their one-line summaries (a
// variable so tests can silence it).
var statsOut io.Writer = os.Stderr

func runStats(ctx context.Context, args []string) error {
	fs := newFlags("stats", "INPUT...", `Computes the statistics of one of the two passes of an LDA (or single-topic)
fit over the input files, which form one shard, and writes them (versioned,
checksummed, zstd-compressed, atomically) for `+"`streamfit merge`"+` and
`+"`streamfit fit --from-stats`"+`. A fit from the statistics of one shard is
the same computation as `+"`streamfit fit`"+` on that shard and gives the same
model.

  phase 1: counts, M1 and the sketch E2·Ω (Ω from --seed); no --basis.
  phase 2: whitened third-order statistics and E2·W; --basis is the merged
           phase-1 statistics (W is computed from them) or earlier phase-2
           statistics (their W is reused, so the new shard merges with them).

Nightly increments: merge the new files' phase-1 statistics into the running
total; run phase 2 with --basis the merged phase-1 file and --previous the
running phase-2 file: the largest principal angle between the two bases is
printed, and while it is at most --drift-tol the previous W is reused, else the
new W is used and phase 2 must be recomputed over all the data.`)
	o := addInputFlags(fs)
	phase := fs.Int("phase", 1, "phase: 1 (second-moment sketch) or 2 (whitened third moment)")
	basis := fs.String("basis", "", "phase 2: merged phase-1 statistics, or phase-2 statistics whose basis to reuse")
	previous := fs.String("previous", "", "phase 2 with a phase-1 --basis: running phase-2 statistics whose basis to reuse while the drift is within --drift-tol")
	driftTol := fs.Float64("drift-tol", 0.05, "largest principal angle (radians) between bases for which --previous is reused")
	model := fs.String("model", "lda", "model: lda or topic")
	out := fs.String("out", "shard.stats", "output statistics file")
	k := fs.Int("k", 10, "number of topics")
	alpha0 := fs.Float64("alpha0", 1, "lda: Dirichlet concentration α₀ (> 0)")
	seed := fs.Uint64("seed", 1, "random seed: determines Ω; every shard must use the same")
	oversample := fs.Int("oversample", 0, "extra sketch columns beyond k (0: the default of fit, 10; every shard must use the same)")
	exactDim := fs.Int("exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size (0: default, -1: never)")
	prog := addProgressFlag(fs)
	inputs, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return usagef("at least one INPUT file is required")
	}
	if err := oneOf(*model, "lda", "topic"); err != nil {
		return err
	}
	if *k < 1 {
		return usagef("--k=%d: need at least one topic", *k)
	}
	if *model == "lda" && (!(*alpha0 > 0) || math.IsInf(*alpha0, 1)) {
		return usagef("--alpha0=%g: the Dirichlet concentration must be a finite number > 0", *alpha0)
	}
	switch {
	case *phase == 1 && (*basis != "" || *previous != ""):
		return usagef("--basis and --previous are for --phase 2")
	case *phase == 2 && *basis == "":
		return usagef("--phase 2 needs --basis (the merged phase-1 statistics)")
	case *phase != 1 && *phase != 2:
		return usagef("--phase=%d: must be 1 or 2", *phase)
	}
	cfg := lda.Config{K: *k, Alpha0: *alpha0, Single: *model == "topic", Seed: *seed, Workers: o.Workers,
		Oversample: *oversample, ExactDim: *exactDim}
	var base *implicit.Stats
	if *phase == 2 {
		if base, err = implicit.ReadStats(*basis); err != nil {
			return err
		}
		if *previous != "" {
			if base.Header.Phase != 1 {
				return usagef("--previous needs a phase-1 --basis to compare with")
			}
			prev, err := implicit.ReadStats(*previous)
			if err != nil {
				return err
			}
			angle, err := lda.BasisDrift(ctx, base, prev, cfg)
			if err != nil {
				return fmt.Errorf("%s vs %s: %w", *basis, *previous, err)
			}
			if angle <= *driftTol {
				fmt.Fprintf(statsOut, "stats: basis drift %.3g rad ≤ %.3g: reusing the basis of %s\n", angle, *driftTol, *previous)
				base = prev
			} else {
				fmt.Fprintf(statsOut, "stats: basis drift %.3g rad > %.3g: new basis; phase 2 must be recomputed over all the data (%s cannot be merged with this shard)\n", angle, *driftTol, *previous)
			}
		}
	}
	p, done := startProgress(*prog, "stats", 0)
	defer done()
	o.Progress = p
	var total *implicit.Stats
	for _, in := range inputs {
		st, err := shardStats(ctx, in, *o, *phase, base, cfg)
		if err != nil {
			return err
		}
		if total == nil {
			total = st
		} else if err := total.Merge(st); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
	}
	total.Header.Shards = 1
	if err := implicit.WriteStats(*out, total); err != nil {
		return err
	}
	done()
	fmt.Fprintf(statsOut, "stats: phase %d of %s (d=%d, k=%d) from %d input file(s), %d documents → %s\n", *phase, *model, total.Header.D, total.Header.K, len(inputs), docs(total), *out)
	return nil
}

// shardStats computes the statistics of one input file.
func shardStats(ctx context.Context, path string, o stream.Options, phase int, base *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
	src, err := stream.Open(path, o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	var st *implicit.Stats
	if phase == 1 {
		st, err = lda.Phase1Stats(ctx, src, cfg)
	} else {
		st, err = lda.Phase2Stats(ctx, src, base, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// fitFromStats fits an LDA or single-topic model from merged phase-2
// statistics (`streamfit fit --from-stats FILE`). Zero fields of cfg that
// the statistics fix (K, Alpha0, Seed, Single) are taken from the file; set
// ones must agree with it, and the whitening settings (--oversample,
// --exact-dim, --power-iters) are always the file's. Incremental fits and a
// drifting whitening basis are described at lda.Phase1Stats; `stats --phase 2
// --previous` prints the drift angle.
func fitFromStats(ctx context.Context, path string, cfg lda.Config) (*models.Model, error) {
	st, err := implicit.ReadStats(path)
	if err != nil {
		return nil, err
	}
	m, err := lda.FitStats(ctx, st, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// docs is the number of documents the statistics used.
func docs(st *implicit.Stats) int64 {
	if st.Pair != nil {
		return st.Pair.Docs
	}
	if st.Triple != nil {
		return st.Triple.Docs
	}
	return 0
}
