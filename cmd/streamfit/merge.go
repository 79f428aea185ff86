package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/shard"
)

// mergeAbout is the help of `streamfit merge`.
const mergeAbout = `Adds the statistics of shards (from ` + "`streamfit stats`" + `, or earlier merges) and
writes the sum atomically. Statistics of different models, phases, k, α₀,
vocabularies, seeds or bases, and statistics that cover the same input, are
refused, naming the field that differs (statistics of different power passes,
or of a power pass with different Q, included). The sums are exact, so any
order or grouping of the same shards gives the same file. Merged phase-1
statistics get the tail of their sketch printed and, when the default fit
would take a power pass after them, the command of the power phase. Every file but the first is
added as it is read, so the merge holds about one copy of the statistics.`

func runMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags("merge", "A.stats B.stats ...", mergeAbout)
	out := fs.String("out", "all.stats", "output statistics file")
	inputs, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return usagef("at least one statistics file is required")
	}
	if err := checkOutputs(inputs, *out); err != nil {
		return err
	}
	model, err := statsfile.PeekModel(inputs[0])
	if err != nil {
		return err
	}
	if model == implicit.EMModel {
		return e.mergeEM(ctx, inputs, *out)
	}
	if k, err := models.Lookup(model); err == nil && models.IsDense(k) {
		return e.mergeDense(ctx, inputs, *out)
	}
	return e.mergeTopic(ctx, inputs, *out)
}

// mergeTopic merges the statistics of a topic model's phase in the files
// inputs into out, and after phase 1 prints whether a power pass is due.
func (e *env) mergeTopic(ctx context.Context, inputs []string, out string) error {
	// The first file is read whole; the others are added to it as they are
	// read, section by section (MergeFile), so the merge holds one copy of
	// the statistics.
	total, err := implicit.ReadTopicStats(inputs[0])
	if err != nil {
		return err
	}
	for _, in := range inputs[1:] {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := total.MergeFile(in); err != nil {
			var ie *statsfile.IncompatibleError
			if errors.As(err, &ie) {
				return fmt.Errorf("%w: cannot merge %s: %s is %v in %s but %v in %s", statsfile.ErrIncompatible, in, ie.Field, ie.B, in, ie.A, mergedName(inputs, in))
			}
			return fmt.Errorf("cannot merge: %w", err)
		}
	}
	if err := implicit.WriteTopicStats(ctx, out, total); err != nil {
		return err
	}
	h := total.Header
	e.printf("merge: %d files, %s of %s (d=%d, k=%d, %d shards) → %s\n", len(inputs), phaseName(h), h.Model, h.D, h.K, h.Shards, out)
	if h.Phase == 1 {
		next := fmt.Sprintf("Next, on every shard:\n  streamfit stats --phase power --basis %s --out SHARD.power.stats [the input flags of the shard's phase 1] SHARD-INPUT...", quoteArg(out))
		return e.powerAdvice(ctx, "merge", total, "the merged statistics'", next)
	}
	return nil
}

// mergedName names the statistics merged before file in: the first file,
// or the merge of the files before it.
func mergedName(inputs []string, in string) string {
	i := slices.Index(inputs, in)
	if i <= 1 {
		return inputs[0]
	}
	return fmt.Sprintf("the merge of %s..%s", inputs[0], inputs[i-1])
}

// mergeDense merges the statistics of a dense model's pass in the files
// inputs into out.
func (e *env) mergeDense(ctx context.Context, inputs []string, out string) error {
	total, err := shard.MergeFiles(inputs)
	if err != nil {
		return fmt.Errorf("cannot merge: %w", err)
	}
	if err := implicit.WriteDenseStats(ctx, out, total); err != nil {
		return err
	}
	h := total.Header
	e.printf("merge: %d files, pass %d of %s (d=%d, k=%d, %d shards, %d rows) → %s\n", len(inputs), h.Phase, h.Model, h.D, h.K, h.Shards, total.Rows, out)
	return nil
}
