package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
)

// runEMStats computes the statistics of the next EM pass of the model in
// the file --model over the inputs and writes them to --out. The pass cap
// is fit's to apply (the statistics of a pass do not depend on it).
func (e *env) runEMStats(ctx context.Context, f *statsFlags, s *lda.Settings) error {
	modelPath := f.emModel
	m, err := models.Read(modelPath)
	if err != nil {
		return err
	}
	if m.Model != lda.Kind.Name() && m.Model != lda.TopicKind.Name() {
		return fmt.Errorf("%s: a %s model: EM passes are for topic models", modelPath, m.Model)
	}
	p, done := e.startProgress(*f.prog, "stats", 0)
	defer done()
	o := *f.o
	o.Progress = p
	cfg := lda.Config{Workers: o.Workers, EM: lda.EM{Passes: math.MaxInt32, Tol: s.Config.EM.Tol, FitAlpha: s.Config.EM.FitAlpha}}
	st, err := shard.LDA{Config: cfg}.EMStats(ctx, shardParts(f.inputs, f.sel), o, m)
	if errors.Is(err, lda.ErrEMDone) {
		return fmt.Errorf("%s: %w: it is the refined model", modelPath, err)
	}
	if err != nil {
		return err
	}
	if err := lda.WriteEMStats(ctx, f.out, st); err != nil {
		return err
	}
	done()
	e.printf("stats: EM pass %d of %s (%s, d=%d, k=%d) from %d input file(s), %d documents → %s\n", st.Header.Phase, modelPath, m.Model, st.Header.D, st.Header.K, len(f.inputs), st.Acc.Docs+st.Acc.Empty, f.out)
	e.printf("Next: merge the shards' EM statistics, then\n  streamfit fit %s --from-stats MERGED.stats --model %s --out NEXT.json\n", m.Model, quoteArg(modelPath))
	return nil
}

// mergeEM merges the statistics of an EM pass in the files inputs into out.
func (e *env) mergeEM(ctx context.Context, inputs []string, out string) error {
	total, err := shard.MergeEMStatsFiles(inputs)
	if err != nil {
		return fmt.Errorf("cannot merge: %w", err)
	}
	if err := lda.WriteEMStats(ctx, out, total); err != nil {
		return err
	}
	h := total.Header
	e.printf("merge: %d files, EM pass %d (d=%d, k=%d, %d shards, %d documents) → %s\n", len(inputs), h.Phase, h.D, h.K, h.Shards, total.Acc.Docs+total.Acc.Empty, out)
	return nil
}

// fitEMStep applies the M-step of the merged statistics of an EM pass (the
// file statsPath) to the model in the file modelPath and writes the next
// model: the refined one when the stopping rule fires or the pass cap is
// reached, else the model of the next pass.
func (e *env) fitEMStep(f *fitFlags, s *lda.Settings) error {
	model, statsPath, modelPath := f.kind.Name(), f.fromStats, f.topic.emModel
	if modelPath == "" {
		return usagef("--from-stats %s holds the statistics of an EM pass: give the model they were computed from with --model", statsPath)
	}
	st, err := lda.ReadEMStats(statsPath)
	if err != nil {
		return err
	}
	m, err := models.Read(modelPath)
	if err != nil {
		return err
	}
	if m.Model != model {
		return usagef("fit %s, but %s holds a %s model", model, modelPath, m.Model)
	}
	cfg := lda.Config{EM: s.Config.EM}
	if err := lda.EMStep(m, st, cfg); err != nil {
		return fmt.Errorf("%s, %s: %w", statsPath, modelPath, err)
	}
	if err := e.writeTopicModel(m, f); err != nil {
		return err
	}
	em := m.Fit.EM
	e.printf("fit %s: EM pass %d, bound %.6g per token → %s\n", model, em.Passes, em.Bounds[len(em.Bounds)-1], f.out)
	if !lda.EMDone(m, cfg) {
		e.printf("Next EM pass, on every shard:\n  streamfit stats --phase em --model %s --out SHARD.em.stats SHARD-INPUT...\n", quoteArg(f.out))
	} else {
		e.printf("fit %s: the EM passes have ended (%d passes, converged %t): %s is the refined model\n", model, em.Passes, em.Converged, f.out)
	}
	return nil
}
