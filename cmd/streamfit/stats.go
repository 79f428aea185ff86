package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("stats", "compute one shard's mergeable statistics of a fit phase (every model)", runStats)
}

// statsOut is where stats and merge print their one-line summaries (a
// variable so tests can silence it).
var statsOut io.Writer = os.Stderr

func runStats(ctx context.Context, args []string) error {
	fs := newFlags("stats", "INPUT...", `Computes the statistics of one of the passes of an LDA (or single-topic)
fit over the input files, which form one shard, and writes them (versioned,
checksummed, zstd-compressed, atomically) for `+"`streamfit merge`"+` and
`+"`streamfit fit --from-stats`"+`. A fit from the statistics of one shard is
the same computation as `+"`streamfit fit --em-passes 0`"+` on that shard, with
the same exact (order-independent) totals, and gives the same model.json;
merges of shards cut at batch boundaries give the model of the statistics of
their union bit for bit. `+"`fit --from-stats S --input F`"+` adds the EM passes
over F: the model of `+"`fit --input F`"+`.

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
the data.

Power and phase 2 take --model, --k, --alpha0, --seed and --oversample from the basis
file; given explicitly, they must agree with it.

Every statistics file lists the input files it covers (path, size, mtime and
a fingerprint of size and first and last 64 KiB, and the range of documents
under --docs or --row-groups); merges of statistics that share a document of
an input are refused.

Sharding one big file: --row-groups A:B reads only row groups A..B-1 of a
Parquet file (record batches of an Arrow IPC file); `+"`streamfit inspect FILE`"+`
lists them with their documents. The documents keep their numbers in the
whole file (from the footer, without decoding the row groups before A), and
statistics of ranges that partition the file merge to exactly those of the
whole file. --docs A:B selects documents of any input, but decodes the file up
to B. --append LAST.stats computes the statistics of
the new INPUTs only (any input LAST covers is refused) with LAST's phase and
settings, and writes LAST plus them atomically (to LAST unless --out is
given): the nightly step. Appending to power statistics reuses their Q (no
--basis; the drift is checked at phase 2, whose --basis is then the updated
power statistics). Appending to phase-2 statistics reuses their basis;
with --basis (the updated phase-1 statistics) the basis drift is checked
first, and beyond --drift-tol the append is refused with the command that
recomputes phase 2 over all the inputs: a stale basis loses the part of the
topics outside its span, and statistics of two bases cannot be merged.

The EM passes of the default lda/topic fit (--phase em --model M.json): the
statistics of the next EM pass of the model M.json over the INPUTs. Start
from `+"`streamfit fit lda --from-stats p2.stats --solver simultaneous --em-passes 0`"+`
(the default fit's start); merge the shards' EM statistics, and
`+"`streamfit fit lda --from-stats EM.stats --model M.json`"+` applies the M-step and the stopping rule,
writing the next model (the refined one when the passes end). --em-tol and
--em-alpha must be those of that fit.

Dense models (`+"`--model gmm`"+` with --differing/--sigma2, ...): their passes are
numbered 1, 2, ... (--phase N); pass N > 1 takes the merged statistics of
pass N−1 as --basis, and stats prints the next pass or, after the last, the
`+"`streamfit fit M --from-stats`"+` command. Pass 1 of every dense
model takes no basis and can always be --append'ed to.
  gmm (exact: d ≤ --exact-dim, default 512), 2 passes: an --append to pass 2
      with --basis the updated merged pass 1 checks the drift of the
      whitening against --drift-tol (beyond it, recompute pass 2).
  ica (exact), 2 passes + one per polishing step (the fit's --solver,
      --restarts, --iters and --seed decide them; stats on merged statistics
      says which pass is the last).
  gmm and ica sketched (d > --exact-dim): first 2 + --power-iters (default
      2) passes of the randomized whitening (pass 1 sketches with the Ω of
      --seed and --oversample; each later one carries the range basis of
      the merged pass before), then the passes above; only pass 1 can be
      appended to.
  multiview, hmm, markov, hmm-snapshot: 2 passes.
Passes after the first of ica, multiview, hmm, markov and hmm-snapshot
cannot be appended to: append to pass 1, then recompute them. hmm reads
sequences and markov/hmm-snapshot snapshot sets in order: a shard owns every
sequence (set) whose first row it selects, and reads on to its end. --docs
selects rows, --row-groups row groups (record batches), as for documents.`)
	o := addInputFlags(fs)
	phase := fs.String("phase", "1", "phase: 1 (second-moment sketch), power (a power pass of the whitening), 2 (whitened third moment), or em (an EM pass of the lda/topic model --model M.json)")
	basis := fs.String("basis", "", "power: merged phase-1 (or power) statistics; phase 2: merged phase-1 or power statistics, or phase-2 statistics whose basis to reuse; "+
		"with --append to phase-2 statistics: the updated phase-1 (or power) statistics, for the drift check")
	powerIters := fs.Int("power-iters", 0, "phase 2: the power passes of the fit reproduced, which the --basis must hold: 0 as the default fit (one where the first sketch does not decay, else none), -1 none, N exactly N")
	appendTo := fs.String("append", "", "existing statistics to which to add those of the INPUTs (see above)")
	previous := fs.String("previous", "", "phase 2 with a phase-1 (or power) --basis: running phase-2 statistics whose basis to reuse while the drift is within --drift-tol; "+
		"power: running power statistics (of the pass after --basis) whose Q to reuse")
	driftTol := fs.Float64("drift-tol", 0.05, "largest principal angle (radians) between bases for which --previous is reused, or beyond which --append to phase 2 is refused")
	model := fs.String("model", "lda", "model: lda, topic, or a dense model ("+denseModelList()+"; see below); with --phase em, the model file whose next EM pass to compute")
	var em emFlags
	fs.Float64Var(&em.tol, "em-tol", lda.DefaultEMTol, "--phase em: the stopping rule's tolerance, as fit's (every pass and the M-step must use the same)")
	fs.BoolVar(&em.alpha, "em-alpha", true, "--phase em: lda: α is re-estimated in the M-step, as fit's --em-alpha")
	out := fs.String("out", "shard.stats", "output statistics file (with --append: LAST itself)")
	k := fs.Int("k", 10, "number of topics")
	alpha0 := fs.Float64("alpha0", 1, "lda: Dirichlet concentration α₀ (> 0)")
	seed := fs.Uint64("seed", 1, "random seed: determines Ω; every shard must use the same")
	cubes := fs.Int64("cube-sample", 0, "--phase 2: "+cubeSampleHelp+"; every shard must use the same")
	oversample := fs.Int("oversample", 0, "extra sketch columns beyond k (0: the default of fit, 10; every shard must use the same)")
	exactDim := fs.Int("exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size (0: default, -1: never)")
	docRangeFlag := fs.String("docs", "", "FIRST:END: only documents FIRST..END-1 of the (single) input, counted from 0, either end optional; "+
		"statistics of complementary ranges that begin and end at multiples of --batch-rows merge exactly to the whole file's")
	rowGroupsFlag := fs.String("row-groups", "", "FIRST:END: only row groups FIRST..END-1 of the (single) Parquet input, or record batches of an Arrow IPC file, "+
		"counted from 0, either end optional; only those are read (see `streamfit inspect`)")
	df := addDenseStatsFlags(fs)
	prog := addProgressFlag(fs)
	inputs, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return usagef("at least one INPUT file is required")
	}
	var sel shardSel
	if sel.docs, err = parseDocRange(*docRangeFlag); err != nil {
		return err
	}
	if sel.pieces, err = parseRange("row-groups", *rowGroupsFlag, "row groups FIRST..END-1 counted from 0"); err != nil {
		return err
	}
	switch {
	case sel.docs != nil && sel.pieces != nil:
		return usagef("--docs and --row-groups both select a part of the input: give one")
	case sel.docs != nil && len(inputs) != 1:
		return usagef("--docs takes one INPUT file, not %d", len(inputs))
	case sel.pieces != nil && len(inputs) != 1:
		return usagef("--row-groups takes one INPUT file, not %d: row groups are numbered within one file", len(inputs))
	}
	if *k < 1 {
		return usagef("--k=%d: need at least one topic", *k)
	}
	if *appendTo != "" && !set(fs, "out") {
		*out = *appendTo // statistics appended to in place
	}
	if err := checkOutputs(append([]string{*basis, *previous, o.VocabPath}, inputs...), *out); err != nil {
		return err
	}
	if *phase == "em" {
		switch {
		case *basis != "" || *previous != "" || *appendTo != "":
			return usagef("--phase em takes the model (--model M.json), not --basis, --previous or --append")
		case *model == "lda" || *model == "topic" || isDense(*model):
			return usagef("--phase em needs --model M.json: the model whose next EM pass to compute (the spectral fit, or the model of the pass before)")
		}
		if err := checkOutputs([]string{*model}, *out); err != nil {
			return err
		}
		return runEMStats(ctx, *model, em, inputs, *o, sel, *out, *prog)
	}
	if isDense(*model) {
		wf, err := denseWorkflow(*model, *k, *exactDim, *oversample, *powerIters, *seed, *alpha0, df)
		if err != nil {
			return err
		}
		return runDenseStats(ctx, wf, *model, *phase, *basis, *appendTo, *out, *driftTol, inputs, *o, sel, *prog)
	}
	if err := oneOf(*model, append([]string{"lda", "topic"}, shard.DenseModels...)...); err != nil {
		return err
	}
	if *model == "lda" && (!(*alpha0 > 0) || math.IsInf(*alpha0, 1)) {
		return usagef("--alpha0=%g: the Dirichlet concentration must be a finite number > 0", *alpha0)
	}
	cfg := lda.Config{K: *k, Alpha0: *alpha0, Single: *model == "topic", Seed: *seed, Workers: o.Workers,
		Oversample: *oversample, ExactDim: *exactDim, PowerIters: *powerIters, CubeSample: *cubes}
	if *appendTo != "" {
		if !set(fs, "out") {
			*out = *appendTo
		}
		return appendStats(ctx, fs, *appendTo, *basis, *driftTol, *out, inputs, *o, sel, cfg, *prog)
	}
	switch {
	case *phase != "1" && *phase != "2" && *phase != "power":
		return usagef("--phase=%s: must be 1, power or 2", *phase)
	case *phase == "1" && (*basis != "" || *previous != ""):
		return usagef("--basis and --previous are for --phase power and 2")
	case *phase != "1" && *basis == "":
		return usagef("--phase %s needs --basis (the merged phase-1 statistics, or those of the last power pass)", *phase)
	case *phase != "2" && set(fs, "power-iters"):
		return usagef("--power-iters is for --phase 2 (run --phase power once per power pass)")
	}
	var base *implicit.Stats
	if *phase != "1" {
		if base, err = implicit.ReadStats(*basis); err != nil {
			return err
		}
		if cfg, err = configFrom(fs, cfg, base.Header, *basis); err != nil {
			return err
		}
		if *phase == "power" && base.Header.Phase != 1 {
			return usagef("--phase power needs a --basis of phase-1 or power statistics, but %s holds phase-%d statistics", *basis, base.Header.Phase)
		}
		if *previous != "" {
			if base.Header.Phase != 1 {
				return usagef("--previous needs a phase-1 (or power) --basis to compare with")
			}
			prev, err := implicit.ReadStats(*previous)
			if err != nil {
				return err
			}
			if *phase == "power" {
				if err := samePowerPass(base.Header, prev.Header, *basis, *previous); err != nil {
					return err
				}
				fmt.Fprintf(statsOut, "stats: reusing the Q of %s (power pass %d), so this shard merges with it; its drift shows in phase 2 (--previous)\n", *previous, prev.Header.Power)
				base, *phase = prev, string(shard.PowerLike)
			} else if base, err = driftBasis(ctx, cfg, base, prev, *basis, *previous, *driftTol); err != nil {
				return err
			}
		}
	}
	total, err := ldaStats(ctx, cfg, inputs, *o, sel, shard.Phase(*phase), base, *prog)
	if errors.Is(err, lda.ErrPowerPass) {
		return fmt.Errorf("%w\nnext, on every shard (then merge them, and give the merged file as --basis of phase 2):\n  %s", err, nextPower(fs, *basis, *out, inputs))
	}
	if err != nil {
		return err
	}
	if err := implicit.WriteStats(ctx, *out, total); err != nil {
		return err
	}
	from := fmt.Sprintf("%d input file(s)", len(inputs))
	if sel.pieces != nil {
		from = fmt.Sprintf("%v, row groups %s", total.Header.Inputs[0], *rowGroupsFlag)
	}
	fmt.Fprintf(statsOut, "stats: %s of %s (d=%d, k=%d) from %s, %d documents → %s\n", phaseName(total.Header), total.Header.Model, total.Header.D, total.Header.K, from, docs(total), *out)
	if total.Header.Phase == 1 {
		next := "Next, if this shard is all the data (else merge the shards' phase-1 statistics, which judges them together):\n  " + nextPower(fs, *out, *out, inputs)
		return powerAdvice(ctx, "stats", total, "this shard's", next)
	}
	return nil
}

// driftBasis returns the basis of phase 2 given merged phase-1 or power
// statistics p1 (from file path) and the running phase-2 statistics prev
// (from file previous), printing the drift (see shard.LDA.Drift).
func driftBasis(ctx context.Context, cfg lda.Config, p1, prev *implicit.Stats, path, previous string, tol float64) (*implicit.Stats, error) {
	b, angle, err := shard.LDA{Config: cfg}.Drift(ctx, p1, prev, tol)
	if err != nil {
		return nil, fmt.Errorf("%s vs %s: %w", path, previous, err)
	}
	if b == prev {
		fmt.Fprintf(statsOut, "stats: basis drift %.3g rad ≤ %.3g: reusing the basis of %s\n", angle, tol, previous)
		return prev, nil
	}
	again := "phase 2"
	if p1.Header.Power > 0 {
		again = "the power phase (--basis the merged phase-1 statistics, no --previous) and phase 2"
	}
	fmt.Fprintf(statsOut, "stats: basis drift %.3g rad > %.3g: new basis; %s must be recomputed over all the data (%s cannot be merged with this shard)\n", angle, tol, again, previous)
	return p1, nil
}

// samePowerPass checks that prev (from file previous) holds the power pass
// after the statistics basis (from file path) for the same fit, so that its
// Q can serve a new shard of that pass.
func samePowerPass(basis, prev implicit.StatsHeader, path, previous string) error {
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
func phaseName(h implicit.StatsHeader) string {
	if h.Power > 0 {
		return fmt.Sprintf("power pass %d", h.Power)
	}
	return fmt.Sprintf("phase %d", h.Phase)
}

// powerAdvice prints (as command cmd) the tail of the sketch that the
// phase-1 or power statistics st give (what says whose) and, when the
// default fit would take a power pass after them, that and next, the
// commands that compute it.
func powerAdvice(ctx context.Context, cmd string, st *implicit.Stats, what, next string) error {
	if st.Header.Exact {
		return nil
	}
	tail, power, err := lda.PowerAdvice(ctx, st, lda.Config{})
	if err != nil {
		return err
	}
	if !power {
		fmt.Fprintf(statsOut, "%s: %s sketch tail σ_last/σ_k = %.3f: no power pass due; phase 2 can take these statistics as its --basis\n", cmd, what, tail)
		return nil
	}
	fmt.Fprintf(statsOut, "%s: %s sketch tail σ_last/σ_k = %.3f > 0.95: the sketch does not decay past k, so the default fit takes a power pass here. %s\n"+
		"then give the power statistics (merged, with several shards) as --basis of phase 2 (or take exactly two passes with --phase 2 --power-iters -1)\n", cmd, what, tail, next)
	return nil
}

// nextPower is the command of the power pass after the statistics basis
// over inputs, with the flags of this command that select and read them
// (fs; the fit's settings come from basis), writing next to out (this
// command's output, named after the shard).
func nextPower(fs *flag.FlagSet, basis, out string, inputs []string) string {
	args := []string{"streamfit", "stats", "--phase", "power", "--basis", quoteArg(basis), "--out", quoteArg(strings.TrimSuffix(out, ".stats") + ".power.stats")}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "phase", "basis", "out", "previous", "append", "drift-tol", "power-iters", "exact-dim", "model", "k", "alpha0", "seed", "oversample", "progress":
		default:
			args = append(args, "--"+f.Name, quoteArg(f.Value.String()))
		}
	})
	for _, in := range inputs {
		args = append(args, quoteArg(in))
	}
	return strings.Join(args, " ")
}

// quoteArg quotes s for a POSIX shell when it holds anything but plain
// characters.
func quoteArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shardSel is the part of each input file a shard covers: a range of
// documents (--docs), of row groups (--row-groups), or all of it (nil).
type shardSel struct {
	docs, pieces *[2]int64
}

// ldaStats computes the statistics of phase over the part sel of the input
// files, as one shard that records every input (shard.LDA.Stats).
func ldaStats(ctx context.Context, cfg lda.Config, inputs []string, o stream.Options, sel shardSel, phase shard.Phase, base *implicit.Stats, prog progressMode) (*implicit.Stats, error) {
	p, done := startProgress(prog, "stats", 0)
	defer done()
	o.Progress = p
	st, err := shard.LDA{Config: cfg}.Stats(ctx, shardParts(inputs, sel), o, phase, base)
	return st, denseErr(err)
}

// appendStats adds the statistics of inputs to those of the file last (see
// the help of stats) and writes the sum to out.
func appendStats(ctx context.Context, fs *flag.FlagSet, last, basis string, driftTol float64, out string, inputs []string, o stream.Options, sel shardSel, cfg lda.Config, prog progressMode) error {
	total, err := implicit.ReadStats(last)
	if err != nil {
		return err
	}
	h := total.Header
	phase := fmt.Sprint(h.Phase)
	if h.Power > 0 {
		phase = "power"
	}
	if set(fs, "phase") && fs.Lookup("phase").Value.String() != phase {
		return usagef("--phase=%s, but %s holds statistics of %s", fs.Lookup("phase").Value, last, phaseName(h))
	}
	if cfg, err = configFrom(fs, cfg, h, last); err != nil {
		return err
	}
	var updated *implicit.Stats
	switch {
	case h.Phase == 1 && basis != "":
		return usagef("--basis is for appending to phase-2 statistics (the drift of a power pass's Q shows in the W of phase 2)")
	case h.Phase == 2 && h.Power == 0 && basis != "":
		if updated, err = implicit.ReadStats(basis); err != nil {
			return err
		}
	}
	p, done := startProgress(prog, "stats", 0)
	defer done()
	o.Progress = p
	angle, err := shard.LDA{Config: cfg}.Append(ctx, total, shardParts(inputs, sel), o, updated, driftTol)
	if err = appendErr(err, last); errors.Is(err, shard.ErrDrift) {
		all := make([]string, 0, len(h.Inputs)+len(inputs))
		for _, in := range h.Inputs {
			all = append(all, quoteArg(in.Path))
		}
		for _, in := range inputs {
			all = append(all, quoteArg(in))
		}
		return fmt.Errorf("basis drift %.3g rad > --drift-tol %g: the basis of %s no longer spans the topics of %s; recompute phase 2 over all the inputs:\n  streamfit stats --phase 2 --basis %s --out %s %s",
			angle, driftTol, last, basis, quoteArg(basis), quoteArg(last), strings.Join(all, " "))
	}
	if err != nil {
		return err
	}
	if updated != nil {
		fmt.Fprintf(statsOut, "stats: basis drift %.3g rad ≤ %g: appending with the basis of %s\n", angle, driftTol, last)
	}
	if err := implicit.WriteStats(ctx, out, total); err != nil {
		return err
	}
	done()
	fmt.Fprintf(statsOut, "stats: appended %d input file(s) to %s (%s, %d inputs, %d documents) → %s\n", len(inputs), last, phaseName(h), len(total.Header.Inputs), docs(total), out)
	return nil
}

// appendErr names the file last in an append's refusal of an input it
// covers, and makes a bad range of row groups a usage error.
func appendErr(err error, last string) error {
	var ce *shard.CoveredError
	if errors.As(err, &ce) {
		return fmt.Errorf("%v: %w: %s already covers it (as %v)", ce.Input, implicit.ErrOverlap, last, ce.As)
	}
	return denseErr(err)
}

// configFrom takes the settings of a fit from the header of statistics in
// path (the basis of phase 2, or the file --append adds to): the flags that
// fix the fit (--model, --k, --alpha0, --seed, --oversample, --exact-dim)
// need not be repeated, and one given explicitly must agree with the file.
func configFrom(fs *flag.FlagSet, cfg lda.Config, h implicit.StatsHeader, path string) (lda.Config, error) {
	model := map[bool]string{false: "lda", true: "topic"}[cfg.Single]
	oversample := h.Oversample
	if h.Exact {
		oversample = cfg.Oversample // not used by an exact whitening
	}
	conflicts := []struct {
		flag       string
		given, has any
	}{
		{"model", model, h.Model}, {"k", cfg.K, h.K}, {"alpha0", cfg.Alpha0, h.Alpha0}, {"seed", cfg.Seed, h.Seed},
		{"oversample", cfg.Oversample, oversample},
	}
	for _, c := range conflicts {
		if set(fs, c.flag) && c.given != c.has && !(c.flag == "alpha0" && h.Model == "topic") {
			return cfg, usagef("--%s=%v differs from %s, computed with %s=%v (leave the flag out to use the file's)", c.flag, c.given, path, c.flag, c.has)
		}
	}
	if set(fs, "exact-dim") {
		return cfg, usagef("--exact-dim does not apply: the whitening of %s (%s) is used", path, map[bool]string{true: "exact", false: "sketched"}[h.Exact])
	}
	cfg.K, cfg.Alpha0, cfg.Seed, cfg.Single, cfg.Oversample = 0, 0, 0, false, 0
	return lda.ConfigFromStats(cfg, h), nil
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
	m, err := shard.LDA{Config: cfg}.Fit(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// parseDocRange parses --docs "a:b" (either end may be left out).
func parseDocRange(v string) (*[2]int64, error) {
	return parseRange("docs", v, "documents FIRST..END-1 counted from 0")
}

// parseRange parses the value v of the range flag name, "a:b" with either
// end optional (b < 0 in the result: to the end); what says what it counts.
func parseRange(name, v, what string) (*[2]int64, error) {
	if v == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(v, ":")
	r := [2]int64{0, -1}
	var err error
	if ok && a != "" {
		r[0], err = strconv.ParseInt(a, 10, 64)
	}
	if err == nil && ok && b != "" {
		r[1], err = strconv.ParseInt(b, 10, 64)
	}
	if !ok || err != nil || r[0] < 0 || (r[1] >= 0 && r[1] <= r[0]) {
		return nil, usagef("--%s=%q: want FIRST:END, %s (either may be left out)", name, v, what)
	}
	return &r, nil
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
