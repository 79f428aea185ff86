package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
)

// topicStatsAbout is the part of the help of `stats lda|topic` about the
// passes of the topic models.
const topicStatsAbout = `
The passes of an LDA (or single-topic) fit. A fit from the statistics of one
shard is the same computation as ` + "`streamfit fit --em-passes 0`" + ` on that shard,
with the same exact (order-independent) totals, and gives the same
model.json; ` + "`fit --from-stats S --input F`" + ` adds the EM passes over F: the
model of ` + "`fit --input F`" + `.

  phase 1: counts, M1 and the sketch E2·Ω (Ω from --seed); no --basis.
  power:   a power pass of the randomized whitening: counts, M1 and E2·Q for
           Q = orth(M2·Ω) from --basis, the merged phase-1 statistics (or
           orth(M2·Q') from merged power statistics, for a second power
           pass). Q is stored in the file; merge the shards' power statistics
           like phase 1's. Statistics of different Q are refused.
  phase 2: whitened third-order statistics and E2·W; --basis is the merged
           phase-1 statistics, or the merged power statistics of the last
           power pass (W is computed from them), or earlier phase-2
           statistics (their W is reused, so the new shard merges with them).

Power passes: the default fit adds one power pass when the first sketch does
not decay past the k-th direction (σ_last/σ_k > 0.95, e.g. vocabulary 100,000
and k=100), and the statistics route reproduces it as the power phase between
phases 1 and 2. stats --phase 1 and merge print that tail, and the next
command when a power pass is due. Phase 2 then refuses the phase-1 statistics
as --basis unless --power-iters -1 says to reproduce a fit of exactly two
passes (a two-pass fit of such data finds fewer topics, and a nightly job
would drift silently from the default fit). --power-iters N > 0 at phase 2
checks that the basis holds N power passes (as fit --power-iters N).
The phase-2 statistics hold all that fit --from-stats needs (W, counts, the
passes taken); the power statistics hold what phase 2 needs (their own counts
and M1, and Q), so each phase takes one --basis file.

Nightly increments: merge the new files' phase-1 statistics into the running
total; run phase 2 with --basis the merged phase-1 file and --previous the
running phase-2 file: the largest principal angle between the two bases is
printed, and while it is at most --drift-tol the previous W is reused, else the
new W is used and phase 2 must be recomputed over all the data. With a power
pass, tonight's power statistics reuse the Q of the running ones (--phase power
--basis the merged phase-1 file --previous the running power file) and merge
into them, and phase 2 takes the merged power file as --basis; beyond
--drift-tol recompute the power phase (without --previous) and phase 2 over all
the data. Appending to power statistics reuses their Q (no --basis; the drift
is checked at phase 2, whose --basis is then the updated power statistics).
Appending to phase-2 statistics reuses their basis; with --basis (the updated
phase-1 statistics) the basis drift is checked first, and beyond --drift-tol
the append is refused with the command that recomputes phase 2 over all the
inputs: a stale basis loses the part of the topics outside its span, and
statistics of two bases cannot be merged.

Power and phase 2 take the model, --k, --alpha0, --seed and --oversample from
the basis file; given explicitly, they must agree with it.

A sweep over k (fit --k 10,20,50): the statistics of each k (--k K --out
p1-kK.stats, and so on per k and phase), then
` + "`streamfit fit lda --from-stats 'p2-k{k}.stats' --k 10,20,50 --input F --heldout TEST`" + `
give the models and scores of ` + "`fit --input F --k 10,20,50 --heldout TEST`" + `; the
statistics of its largest k alone (--k takes the list, and computes those of the
largest) serve every k with the shared start (fit --sweep-start shared).

The EM passes of the default fit (--phase em --model M.json): the statistics
of the next EM pass of the model M.json over the INPUTs. Start from
` + "`streamfit fit lda --from-stats p2.stats --solver simultaneous --em-passes 0`" + `
(the default fit's start); merge the shards' EM statistics, and
` + "`streamfit fit lda --from-stats EM.stats --model M.json`" + ` applies the M-step and
the stopping rule, writing the next model (the refined one when the passes
end). --em-tol and --em-alpha must be those of that fit.`

// addTopicStatsFlags registers the flags of the topic models' passes.
func addTopicStatsFlags(f *statsFlags) {
	fs := f.fs
	fs.StringVar(&f.phase, "phase", "1", "phase: 1 (second-moment sketch), power (a power pass of the whitening), 2 (whitened third moment), or em (an EM pass of the lda/topic model --model M.json)")
	fs.StringVar(&f.basis, "basis", "", "power: merged phase-1 (or power) statistics; phase 2: merged phase-1 or power statistics, or phase-2 statistics whose basis to reuse; "+
		"with --append to phase-2 statistics: the updated phase-1 (or power) statistics, for the drift check")
	fs.StringVar(&f.previous, "previous", "", "phase 2 with a phase-1 (or power) --basis: running phase-2 statistics whose basis to reuse while the drift is within --drift-tol; "+
		"power: running power statistics (of the pass after --basis) whose Q to reuse")
	fs.StringVar(&f.emModel, "model", "", "--phase em: the model file whose next EM pass to compute (the spectral fit, or the model of the pass before)")
}

// topicStats is `streamfit stats lda|topic`: a phase of the spectral fit,
// an append to the statistics of one, or an EM pass.
func (e *env) topicStats(ctx context.Context, f *statsFlags, s *lda.Settings) error {
	if f.emModel != "" && f.phase != "em" {
		if _, err := models.Lookup(f.emModel); err == nil {
			return usagef("--model names a model file; give the model first: streamfit stats %s [flags] INPUT...", f.emModel)
		}
		return usagef("--model is for --phase em: the model whose next EM pass to compute")
	}
	if f.phase == "em" {
		switch {
		case f.basis != "" || f.previous != "" || f.appendTo != "":
			return usagef("--phase em takes the model (--model M.json), not --basis, --previous or --append")
		case f.emModel == "":
			return usagef("--phase em needs --model M.json: the model whose next EM pass to compute (the spectral fit, or the model of the pass before)")
		}
		if err := checkOutputs([]string{f.emModel}, f.out); err != nil {
			return err
		}
		return e.runEMStats(ctx, f, s)
	}
	cfg := s.Config
	cfg.K, cfg.Seed, cfg.Workers = f.common.K, f.common.Seed, f.common.Workers
	if len(f.ks.ks) > 1 {
		var err error
		if cfg, err = lda.SweepConfig(cfg, f.ks.ks); err != nil {
			return usagef("--k %s: %v", f.ks.String(), err)
		}
	}
	if f.appendTo != "" {
		return e.appendStats(ctx, f, cfg)
	}
	switch {
	case f.phase != "1" && f.phase != "2" && f.phase != "power":
		return usagef("--phase=%s: must be 1, power or 2", f.phase)
	case f.phase == "1" && (f.basis != "" || f.previous != ""):
		return usagef("--basis and --previous are for --phase power and 2")
	case f.phase != "1" && f.basis == "":
		return usagef("--phase %s needs --basis (the merged phase-1 statistics, or those of the last power pass)", f.phase)
	case f.phase != "2" && f.given("power-iters"):
		return usagef("--power-iters is for --phase 2 (run --phase power once per power pass)")
	}
	phase, base, cfg, err := e.topicBasis(ctx, f, cfg)
	if err != nil {
		return err
	}
	return e.topicPhase(ctx, f, cfg, phase, base)
}

// topicBasis reads the basis of a phase after the first, with the settings
// of the fit it fixes, and with --previous the running statistics whose
// basis or Q to reuse instead.
func (e *env) topicBasis(ctx context.Context, f *statsFlags, cfg lda.Config) (shard.Phase, *implicit.TopicStats, lda.Config, error) {
	phase := shard.Phase(f.phase)
	if f.phase == "1" {
		return phase, nil, cfg, nil
	}
	base, err := implicit.ReadTopicStats(f.basis)
	if err != nil {
		return phase, nil, cfg, err
	}
	if cfg, err = f.configFrom(cfg, base.Header, f.basis); err != nil {
		return phase, nil, cfg, err
	}
	if f.phase == "power" && base.Header.Phase != 1 {
		return phase, nil, cfg, usagef("--phase power needs a --basis of phase-1 or power statistics, but %s holds phase-%d statistics", f.basis, base.Header.Phase)
	}
	if f.previous == "" {
		return phase, base, cfg, nil
	}
	if base.Header.Phase != 1 {
		return phase, nil, cfg, usagef("--previous needs a phase-1 (or power) --basis to compare with")
	}
	prev, err := implicit.ReadTopicStats(f.previous)
	if err != nil {
		return phase, nil, cfg, err
	}
	if f.phase != "power" {
		base, err = e.driftBasis(ctx, cfg, base, prev, f.basis, f.previous, f.driftTol)
		return phase, base, cfg, err
	}
	if err := samePowerPass(base.Header, prev.Header, f.basis, f.previous); err != nil {
		return phase, nil, cfg, err
	}
	e.printf("stats: reusing the Q of %s (power pass %d), so this shard merges with it; its drift shows in phase 2 (--previous)\n", f.previous, prev.Header.Power)
	return shard.PowerLike, prev, cfg, nil
}

// topicPhase computes the statistics of phase against base over the
// inputs, writes them and prints what follows.
func (e *env) topicPhase(ctx context.Context, f *statsFlags, cfg lda.Config, phase shard.Phase, base *implicit.TopicStats) error {
	p, done := e.startProgress(*f.prog, "stats", 0)
	defer done()
	o := *f.o
	o.Progress = p
	total, err := shard.LDA{Config: cfg}.Stats(ctx, shardParts(f.inputs, f.sel), o, phase, base)
	if errors.Is(err, lda.ErrPowerPass) {
		return fmt.Errorf("%w\nnext, on every shard (then merge them, and give the merged file as --basis of phase 2):\n  %s", err, f.nextPower(f.basis, f.out))
	}
	if err != nil {
		return denseErr(err)
	}
	if err := implicit.WriteTopicStats(ctx, f.out, total); err != nil {
		return err
	}
	done()
	from := fmt.Sprintf("%d input file(s)", len(f.inputs))
	if f.sel.pieces != nil {
		from = fmt.Sprintf("%v, row groups %s", total.Header.Inputs[0], f.pieces)
	}
	e.printf("stats: %s of %s (d=%d, k=%d) from %s, %d documents → %s\n", phaseName(total.Header), total.Header.Model, total.Header.D, total.Header.K, from, docs(total), f.out)
	if total.Header.Phase == 2 && len(f.ks.ks) > 1 {
		e.printf("stats: the statistics of k=%d hold the shared start of every k of the sweep; fit them all (the EM passes and the scores read the documents; each k's statistics of its own, --from-stats 'p2-k{k}.stats', give each k its own start instead):\n  streamfit fit %s --from-stats %s --k %s --sweep-start shared --input DOCS --heldout TEST --out 'model-k{k}.json'\n",
			total.Header.K, total.Header.Model, quoteArg(f.out), f.ks.String())
	}
	if total.Header.Phase == 1 {
		next := "Next, if this shard is all the data (else merge the shards' phase-1 statistics, which judges them together):\n  " + f.nextPower(f.out, f.out)
		return e.powerAdvice(ctx, "stats", total, "this shard's", next)
	}
	return nil
}

// appendStats adds the statistics of the inputs to those of the file
// --append names (see the help of stats) and writes the sum to --out.
func (e *env) appendStats(ctx context.Context, f *statsFlags, cfg lda.Config) error {
	last := f.appendTo
	total, err := implicit.ReadTopicStats(last)
	if err != nil {
		return err
	}
	h := total.Header
	phase := fmt.Sprint(h.Phase)
	if h.Power > 0 {
		phase = "power"
	}
	if f.given("phase") && f.phase != phase {
		return usagef("--phase=%s, but %s holds statistics of %s", f.phase, last, phaseName(h))
	}
	if cfg, err = f.configFrom(cfg, h, last); err != nil {
		return err
	}
	var updated *implicit.TopicStats
	switch {
	case h.Phase == 1 && f.basis != "":
		return usagef("--basis is for appending to phase-2 statistics (the drift of a power pass's Q shows in the W of phase 2)")
	case h.Phase == 2 && h.Power == 0 && f.basis != "":
		if updated, err = implicit.ReadTopicStats(f.basis); err != nil {
			return err
		}
	}
	p, done := e.startProgress(*f.prog, "stats", 0)
	defer done()
	o := *f.o
	o.Progress = p
	angle, err := shard.LDA{Config: cfg}.Append(ctx, total, shardParts(f.inputs, f.sel), o, updated, f.driftTol)
	if err = appendErr(err, last); errors.Is(err, shard.ErrDrift) {
		return f.driftError(h, angle)
	}
	if err != nil {
		return err
	}
	if updated != nil {
		e.printf("stats: basis drift %.3g rad ≤ %g: appending with the basis of %s\n", angle, f.driftTol, last)
	}
	if err := implicit.WriteTopicStats(ctx, f.out, total); err != nil {
		return err
	}
	done()
	e.printf("stats: appended %d input file(s) to %s (%s, %d inputs, %d documents) → %s\n", len(f.inputs), last, phaseName(h), len(total.Header.Inputs), docs(total), f.out)
	return nil
}

// driftError is the refusal of an append to the phase-2 statistics with
// header h whose basis drifted by angle, with the command that recomputes
// phase 2 over all the inputs.
func (f *statsFlags) driftError(h statsfile.Header, angle float64) error {
	all := make([]string, 0, len(h.Inputs)+len(f.inputs))
	for _, in := range h.Inputs {
		all = append(all, quoteArg(in.Path))
	}
	for _, in := range f.inputs {
		all = append(all, quoteArg(in))
	}
	return fmt.Errorf("basis drift %.3g rad > --drift-tol %g: the basis of %s no longer spans the topics of %s; recompute phase 2 over all the inputs:\n  streamfit stats --phase 2 --basis %s --out %s %s",
		angle, f.driftTol, f.appendTo, f.basis, quoteArg(f.basis), quoteArg(f.appendTo), strings.Join(all, " "))
}

// configFrom takes the settings of a fit from the header of statistics in
// path (the basis of phase 2, or the file --append adds to): the model
// and the flags that fix the fit (--k, --alpha0, --seed, --oversample,
// --exact-dim) need not be repeated, and one given explicitly must agree
// with the file.
func (f *statsFlags) configFrom(cfg lda.Config, h statsfile.Header, path string) (lda.Config, error) {
	if f.kindGiven && f.kind.Name() != h.Model {
		return cfg, usagef("the model %s differs from %s, computed with model=%s (leave the model out to use the file's)", f.kind.Name(), path, h.Model)
	}
	oversample := h.Oversample
	if h.Exact {
		oversample = cfg.Oversample // not used by an exact whitening
	}
	conflicts := []struct {
		flag       string
		given, has any
	}{
		{"k", cfg.K, h.K}, {"alpha0", cfg.Alpha0, h.Alpha0}, {"seed", cfg.Seed, h.Seed},
		{"oversample", cfg.Oversample, oversample},
	}
	for _, c := range conflicts {
		if f.given(c.flag) && c.given != c.has && !(c.flag == "alpha0" && h.Model == lda.TopicKind.Name()) {
			return cfg, usagef("--%s=%v differs from %s, computed with %s=%v (leave the flag out to use the file's)", c.flag, c.given, path, c.flag, c.has)
		}
	}
	if f.given("exact-dim") {
		return cfg, usagef("--exact-dim does not apply: the whitening of %s (%s) is used", path, map[bool]string{true: "exact", false: "sketched"}[h.Exact])
	}
	cfg.K, cfg.Alpha0, cfg.Seed, cfg.Single, cfg.Oversample = 0, 0, 0, false, 0
	return lda.ConfigFromStats(cfg, h), nil
}

// driftBasis returns the basis of phase 2 given merged phase-1 or power
// statistics p1 (from file path) and the running phase-2 statistics prev
// (from file previous), printing the drift (see shard.LDA.Drift).
func (e *env) driftBasis(ctx context.Context, cfg lda.Config, p1, prev *implicit.TopicStats, path, previous string, tol float64) (*implicit.TopicStats, error) {
	b, angle, err := shard.LDA{Config: cfg}.Drift(ctx, p1, prev, tol)
	if err != nil {
		return nil, fmt.Errorf("%s vs %s: %w", path, previous, err)
	}
	if b == prev {
		e.printf("stats: basis drift %.3g rad ≤ %.3g: reusing the basis of %s\n", angle, tol, previous)
		return prev, nil
	}
	again := "phase 2"
	if p1.Header.Power > 0 {
		again = "the power phase (--basis the merged phase-1 statistics, no --previous) and phase 2"
	}
	e.printf("stats: basis drift %.3g rad > %.3g: new basis; %s must be recomputed over all the data (%s cannot be merged with this shard)\n", angle, tol, again, previous)
	return p1, nil
}

// samePowerPass checks that prev (from file previous) holds the power pass
// after the statistics basis (from file path) for the same fit, so that its
// Q can serve a new shard of that pass.
func samePowerPass(basis, prev statsfile.Header, path, previous string) error {
	if prev.Power != basis.Power+1 {
		return usagef("--previous %s holds %s, but the power pass after %s (%s) is power pass %d", previous, phaseName(prev), path, phaseName(basis), basis.Power+1)
	}
	h := prev
	h.Power, h.Basis, h.Shards, h.Inputs = basis.Power, basis.Basis, basis.Shards, basis.Inputs
	if err := basis.Compatible(h); err != nil {
		return fmt.Errorf("%s vs %s: %w", path, previous, err)
	}
	return nil
}

// phaseName names the pass of statistics with header h.
func phaseName(h statsfile.Header) string {
	if h.Power > 0 {
		return fmt.Sprintf("power pass %d", h.Power)
	}
	return fmt.Sprintf("phase %d", h.Phase)
}

// powerAdvice prints (as command cmd) the tail of the sketch that the
// phase-1 or power statistics st give (what says whose) and, when the
// default fit would take a power pass after them, that and next, the
// commands that compute it.
func (e *env) powerAdvice(ctx context.Context, cmd string, st *implicit.TopicStats, what, next string) error {
	if st.Header.Exact {
		return nil
	}
	tail, power, err := lda.PowerAdvice(ctx, st, lda.Config{})
	if err != nil {
		return err
	}
	if !power {
		e.printf("%s: %s sketch tail σ_last/σ_k = %.3f: no power pass due; phase 2 can take these statistics as its --basis\n", cmd, what, tail)
		return nil
	}
	e.printf("%s: %s sketch tail σ_last/σ_k = %.3f > 0.95: the sketch does not decay past k, so the default fit takes a power pass here. %s\n"+
		"then give the power statistics (merged, with several shards) as --basis of phase 2 (or take exactly two passes with --phase 2 --power-iters -1)\n", cmd, what, tail, next)
	return nil
}

// nextPower is the command of the power pass after the statistics basis
// over the inputs, with the flags of this command that select and read them
// (the fit's settings come from basis), writing next to out (this
// command's output, named after the shard).
func (f *statsFlags) nextPower(basis, out string) string {
	args := []string{"streamfit", "stats", "--phase", "power", "--basis", quoteArg(basis), "--out", quoteArg(strings.TrimSuffix(out, ".stats") + ".power.stats")}
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "phase", "basis", "out", "previous", "append", "drift-tol", "power-iters", "exact-dim", "model", "k", "alpha0", "seed", "oversample", "progress":
		default:
			args = append(args, "--"+fl.Name, quoteArg(fl.Value.String()))
		}
	})
	for _, in := range f.inputs {
		args = append(args, quoteArg(in))
	}
	return strings.Join(args, " ")
}

// fitFromStats fits an LDA or single-topic model from merged phase-2
// statistics (`streamfit fit --from-stats FILE`). Zero fields of cfg that
// the statistics fix (K, Alpha0, Seed, Single) are taken from the file; set
// ones must agree with it, and the whitening settings (--oversample,
// --exact-dim, --power-iters) are always the file's. Incremental fits and a
// drifting whitening basis are described at lda.Phase1Stats; `stats --phase 2
// --previous` prints the drift angle.
func fitFromStats(ctx context.Context, path string, cfg lda.Config) (*models.Model, error) {
	st, err := implicit.ReadTopicStats(path)
	if err != nil {
		return nil, err
	}
	m, err := shard.LDA{Config: cfg}.Fit(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// docs is the number of documents the statistics used.
func docs(st *implicit.TopicStats) int64 {
	if st.Pair != nil {
		return st.Pair.Docs
	}
	if st.Triple != nil {
		return st.Triple.Docs
	}
	return 0
}
