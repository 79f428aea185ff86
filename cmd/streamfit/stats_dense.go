package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// denseStatsAbout is the part of the help of `stats MODEL` about the passes
// of a model of dense rows; the model's own (models.Passes.About) follows.
const denseStatsAbout = `
The passes are numbered 1, 2, ... (--phase N); pass N > 1 takes the merged
statistics of pass N−1 as --basis, and stats prints the next pass or, after
the last, the ` + "`streamfit fit MODEL --from-stats`" + ` command. Pass 1 takes no
basis and can always be --append'ed to. --docs selects rows, --row-groups
row groups (record batches), as for documents.`

// denseStats is `streamfit stats MODEL` for a model of dense rows: the pass
// --phase (after the merged statistics --basis), or an append to the file
// --append names.
func (e *env) denseStats(ctx context.Context, f *statsFlags, s models.DenseSettings) error {
	wf := shard.DenseOf(s.Passes(f.common))
	p, done := e.startProgress(*f.prog, "stats", 0)
	defer done()
	o := *f.o
	o.Progress = p
	parts := shardParts(f.inputs, f.sel)
	if f.appendTo != "" {
		sum, err := e.denseAppend(ctx, f, wf, parts, o)
		if err != nil {
			return err
		}
		done()
		e.printf("stats: appended %d input file(s) to %s (pass %d of %s, %d inputs, %d rows) → %s\n", len(f.inputs), f.appendTo, sum.Header.Phase, f.kind.Name(), len(sum.Header.Inputs), sum.Rows, f.out)
		return nil
	}
	n, base, err := f.denseBasis()
	if err != nil {
		return err
	}
	st, err := wf.Stats(ctx, parts, o, base)
	if err != nil {
		return denseErr(err)
	}
	if err := implicit.WriteDenseStats(ctx, f.out, st); err != nil {
		return err
	}
	done()
	e.printf("stats: pass %d of %s (d=%d, k=%d) from %d input file(s), %d rows → %s\n", n, f.kind.Name(), st.Header.D, st.Header.K, len(f.inputs), st.Rows, f.out)
	return e.denseNext(ctx, wf, st, f.out)
}

// denseBasis returns the number of the pass --phase names and the merged
// statistics of the pass before (--basis; nil for pass 1).
func (f *statsFlags) denseBasis() (int, *implicit.DenseStats, error) {
	n, err := strconv.Atoi(f.phase)
	if err != nil || n < 1 {
		return 0, nil, usagef("--phase=%s: %s's passes are numbered 1, 2, ...", f.phase, f.kind.Name())
	}
	switch {
	case n == 1 && f.basis != "":
		return 0, nil, usagef("--basis is for the passes after the first")
	case n == 1:
		return n, nil, nil
	case f.basis == "":
		return 0, nil, usagef("--phase %d needs --basis: the merged statistics of pass %d", n, n-1)
	}
	base, err := implicit.ReadDenseStats(f.basis)
	if err != nil {
		return 0, nil, err
	}
	if base.Header.Phase != n-1 {
		return 0, nil, usagef("--phase %d needs the statistics of pass %d as --basis, but %s holds pass %d", n, n-1, f.basis, base.Header.Phase)
	}
	return n, base, nil
}

// denseAppend adds the statistics of parts to those of the file --append
// names, checking the drift of its basis against --basis when given, and
// writes the sum to --out.
func (e *env) denseAppend(ctx context.Context, f *statsFlags, wf shard.Dense, parts []shard.Part, o stream.Options) (*implicit.DenseStats, error) {
	last := f.appendTo
	total, err := implicit.ReadDenseStats(last)
	if err != nil {
		return nil, err
	}
	var updated *implicit.DenseStats
	if f.basis != "" {
		if updated, err = implicit.ReadDenseStats(f.basis); err != nil {
			return nil, err
		}
	}
	sum, angle, err := wf.Append(ctx, total, parts, o, updated, f.driftTol)
	if errors.Is(err, shard.ErrDrift) {
		return nil, fmt.Errorf("%w: recompute pass %d over all the inputs with --basis %s", err, total.Header.Phase, quoteArg(f.basis))
	}
	if err != nil {
		return nil, appendErr(err, last)
	}
	if updated != nil {
		e.printf("stats: basis drift %.3g rad ≤ %g: appending with the basis of %s\n", angle, f.driftTol, last)
	}
	return sum, implicit.WriteDenseStats(ctx, f.out, sum)
}

// denseNext prints what follows the statistics st (in the file out): the
// next pass, or the fit. Whether a pass is the last may depend on the
// merged statistics of all the shards (ICA's polishing converges); when
// this shard's do not tell, both are printed.
func (e *env) denseNext(ctx context.Context, wf shard.Dense, st *implicit.DenseStats, out string) error {
	fit := fmt.Sprintf("streamfit fit %s --from-stats %s", st.Header.Model, quoteArg(out))
	next := fmt.Sprintf("streamfit stats %s --phase %d --basis %s SHARD-INPUT...", st.Header.Model, st.Header.Phase+1, quoteArg(out))
	last, err := wf.Last(ctx, st)
	switch {
	case err != nil:
		e.printf("next, with the statistics merged over all the shards (here %s): %s, or, when stats on the merged file says it is the last pass, %s\n", quoteArg(out), next, fit)
	case last:
		if k, err := models.Lookup(st.Header.Model); err == nil && refinesByDefault(k) {
			fit += " --input ROWS (the likelihood passes over the rows, as fit --input; without --input, the moment fit alone)"
		}
		e.printf("next (merged over all the shards): %s\n", fit)
	default:
		e.printf("next, on every shard (with these statistics merged over all the shards as --basis): %s\n", next)
	}
	return nil
}
