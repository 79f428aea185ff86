package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// emFlags are the settings of the EM passes that their statistics record
// (stats --phase em) and the M-step checks (fit --from-stats --model).
type emFlags struct {
	tol   float64
	alpha bool
}

// config is the lda.Config of an EM pass with workers; the pass cap is
// fit's to apply (the statistics of a pass do not depend on it).
func (e emFlags) config(workers int) lda.Config {
	return lda.Config{Workers: workers, EM: lda.EM{Passes: math.MaxInt32, Tol: e.tol, FitAlpha: e.alpha}}
}

// runEMStats computes the statistics of the next EM pass of the model in
// the file modelPath over inputs and writes them to out.
func runEMStats(ctx context.Context, modelPath string, e emFlags, inputs []string, o stream.Options, sel shardSel, out string, prog progressMode) error {
	if !(e.tol > 0) || math.IsInf(e.tol, 1) {
		return usagef("--em-tol=%g: want a finite tolerance > 0", e.tol)
	}
	m, err := models.Read(modelPath)
	if err != nil {
		return err
	}
	if m.Model != "lda" && m.Model != "topic" {
		return fmt.Errorf("%s: a %s model: EM passes are for lda and topic models", modelPath, m.Model)
	}
	p, done := startProgress(prog, "stats", 0)
	defer done()
	o.Progress = p
	st, err := shard.LDA{Config: e.config(o.Workers)}.EMStats(ctx, shardParts(inputs, sel), o, m)
	if errors.Is(err, lda.ErrEMDone) {
		return fmt.Errorf("%s: %w: it is the refined model", modelPath, err)
	}
	if err != nil {
		return err
	}
	if err := implicit.WriteEMStats(ctx, out, st); err != nil {
		return err
	}
	done()
	fmt.Fprintf(statsOut, "stats: EM pass %d of %s (%s, d=%d, k=%d) from %d input file(s), %d documents → %s\n", st.Header.Phase, modelPath, m.Model, st.Header.D, st.Header.K, len(inputs), st.Acc.Docs+st.Acc.Empty, out)
	fmt.Fprintf(statsOut, "Next: merge the shards' EM statistics, then\n  streamfit fit %s --from-stats MERGED.stats --model %s --out NEXT.json\n", m.Model, quoteArg(modelPath))
	return nil
}

// mergeEM merges the statistics of an EM pass in the files inputs into out.
func mergeEM(ctx context.Context, inputs []string, out string) error {
	total, err := shard.MergeEMStatsFiles(inputs)
	if err != nil {
		return fmt.Errorf("cannot merge: %w", err)
	}
	if err := implicit.WriteEMStats(ctx, out, total); err != nil {
		return err
	}
	h := total.Header
	fmt.Fprintf(statsOut, "merge: %d files, EM pass %d (d=%d, k=%d, %d shards, %d documents) → %s\n", len(inputs), h.Phase, h.D, h.K, h.Shards, total.Acc.Docs+total.Acc.Empty, out)
	return nil
}

// fitEMStep applies the M-step of the merged statistics of an EM pass (the
// file statsPath) to the model in the file modelPath and writes the next
// model: the refined one when the stopping rule fires or the pass cap is
// reached, else the model of the next pass.
func fitEMStep(model, statsPath, modelPath string, f *fitFlags) error {
	if modelPath == "" {
		return usagef("--from-stats %s holds the statistics of an EM pass: give the model they were computed from with --model", statsPath)
	}
	st, err := implicit.ReadEMStats(statsPath)
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
	cfg := lda.Config{EM: f.em()}
	if err := lda.EMStep(m, st, cfg); err != nil {
		return fmt.Errorf("%s, %s: %w", statsPath, modelPath, err)
	}
	if err := writeTopicModel(m, f); err != nil {
		return err
	}
	em := m.Fit.EM
	fmt.Fprintf(os.Stderr, "fit %s: EM pass %d, bound %.6g per token → %s\n", model, em.Passes, em.Bounds[len(em.Bounds)-1], f.out)
	if !lda.EMDone(m, cfg) {
		fmt.Fprintf(os.Stderr, "Next EM pass, on every shard:\n  streamfit stats --phase em --model %s --out SHARD.em.stats SHARD-INPUT...\n", quoteArg(f.out))
	} else {
		fmt.Fprintf(os.Stderr, "fit %s: the EM passes have ended (%d passes, converged %t): %s is the refined model\n", model, em.Passes, em.Converged, f.out)
	}
	return nil
}
