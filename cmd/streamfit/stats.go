package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

func init() {
	register("stats", "compute one shard's mergeable statistics of a fit phase (lda/topic)", runStats)
}

// statsOut is where stats and merge print their one-line summaries (a
// variable so tests can silence it).
var statsOut io.Writer = os.Stderr

func runStats(ctx context.Context, args []string) error {
	fs := newFlags("stats", "INPUT...", `Computes the statistics of one of the passes of an LDA (or single-topic)
fit over the input files, which form one shard, and writes them (versioned,
checksummed, zstd-compressed, atomically) for `+"`streamfit merge`"+` and
`+"`streamfit fit --from-stats`"+`. A fit from the statistics of one shard is
the same computation as `+"`streamfit fit`"+` on that shard, but the statistics
hold exact (order-independent) totals where fit sums in batch order, so the
models may differ in the last bits; merges of shards cut at batch boundaries
give the model of the statistics of their union bit for bit.

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
topics outside its span, and statistics of two bases cannot be merged.`)
	o := addReadFlags(fs)
	addDocFlags(fs, o)
	phase := fs.String("phase", "1", "phase: 1 (second-moment sketch), power (a power pass of the whitening) or 2 (whitened third moment)")
	basis := fs.String("basis", "", "power: merged phase-1 (or power) statistics; phase 2: merged phase-1 or power statistics, or phase-2 statistics whose basis to reuse; "+
		"with --append to phase-2 statistics: the updated phase-1 (or power) statistics, for the drift check")
	powerIters := fs.Int("power-iters", 0, "phase 2: the power passes of the fit reproduced, which the --basis must hold: 0 as the default fit (one where the first sketch does not decay, else none), -1 none, N exactly N")
	appendTo := fs.String("append", "", "existing statistics to which to add those of the INPUTs (see above)")
	previous := fs.String("previous", "", "phase 2 with a phase-1 (or power) --basis: running phase-2 statistics whose basis to reuse while the drift is within --drift-tol; "+
		"power: running power statistics (of the pass after --basis) whose Q to reuse")
	driftTol := fs.Float64("drift-tol", 0.05, "largest principal angle (radians) between bases for which --previous is reused, or beyond which --append to phase 2 is refused")
	model := fs.String("model", "lda", "model: lda or topic")
	out := fs.String("out", "shard.stats", "output statistics file (with --append: LAST itself)")
	k := fs.Int("k", 10, "number of topics")
	alpha0 := fs.Float64("alpha0", 1, "lda: Dirichlet concentration α₀ (> 0)")
	seed := fs.Uint64("seed", 1, "random seed: determines Ω; every shard must use the same")
	oversample := fs.Int("oversample", 0, "extra sketch columns beyond k (0: the default of fit, 10; every shard must use the same)")
	exactDim := fs.Int("exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size (0: default, -1: never)")
	docRangeFlag := fs.String("docs", "", "FIRST:END: only documents FIRST..END-1 of the (single) input, counted from 0, either end optional; "+
		"statistics of complementary ranges that begin and end at multiples of --batch-rows merge exactly to the whole file's")
	rowGroupsFlag := fs.String("row-groups", "", "FIRST:END: only row groups FIRST..END-1 of the (single) Parquet input, or record batches of an Arrow IPC file, "+
		"counted from 0, either end optional; only those are read (see `streamfit inspect`)")
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
	if err := oneOf(*model, "lda", "topic"); err != nil {
		return err
	}
	if *k < 1 {
		return usagef("--k=%d: need at least one topic", *k)
	}
	if *model == "lda" && (!(*alpha0 > 0) || math.IsInf(*alpha0, 1)) {
		return usagef("--alpha0=%g: the Dirichlet concentration must be a finite number > 0", *alpha0)
	}
	if *appendTo != "" && !set(fs, "out") {
		*out = *appendTo // statistics appended to in place
	}
	if err := checkOutputs(append([]string{*basis, *previous, o.VocabPath}, inputs...), *out); err != nil {
		return err
	}
	cfg := lda.Config{K: *k, Alpha0: *alpha0, Single: *model == "topic", Seed: *seed, Workers: o.Workers,
		Oversample: *oversample, ExactDim: *exactDim, PowerIters: *powerIters}
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
				base, *phase = prev, "power-like"
			} else if base, err = driftBasis(ctx, base, prev, cfg, *basis, *previous, *driftTol); err != nil {
				return err
			}
		}
	}
	total, err := inputsStats(ctx, inputs, *o, sel, *phase, base, cfg, *prog)
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
// (from file previous): prev, to reuse its W, while the largest principal
// angle between its W and p1's is at most tol, else p1 (a new W, whose
// phase 2 must be recomputed over all the data).
func driftBasis(ctx context.Context, p1, prev *implicit.Stats, cfg lda.Config, path, previous string, tol float64) (*implicit.Stats, error) {
	angle, err := basisDrift(ctx, p1, prev, cfg, path, previous)
	if err != nil {
		return nil, err
	}
	if angle <= tol {
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

// openShard opens the part of the input file path that sel selects, and
// describes it for the provenance of its statistics.
func openShard(path string, o stream.Options, sel shardSel) (stream.DocSource, implicit.Input, error) {
	desc, err := implicit.DescribeInput(path)
	if err != nil {
		return nil, desc, err
	}
	if sel.pieces != nil {
		src, err := columnar.OpenPieces(path, o, int(sel.pieces[0]), int(sel.pieces[1]))
		if errors.Is(err, columnar.ErrRange) {
			return nil, desc, usageError{"--row-groups: " + err.Error()}
		}
		if err != nil {
			return nil, desc, err
		}
		r := src.DocRange()
		desc.Docs = &r
		return src, desc, nil
	}
	src, err := stream.Open(path, o)
	if err != nil {
		return nil, desc, err
	}
	if desc.Docs = sel.docs; sel.docs != nil {
		src = docRange{src: src, r: *sel.docs}
	}
	return src, desc, nil
}

// inputsStats computes the statistics of phase over the part sel of the
// input files, as one shard that records every input.
func inputsStats(ctx context.Context, inputs []string, o stream.Options, sel shardSel, phase string, base *implicit.Stats, cfg lda.Config, prog progressMode) (*implicit.Stats, error) {
	p, done := startProgress(prog, "stats", 0)
	defer done()
	o.Progress = p
	// base is not read after the first input's pass begins, so the basis
	// file's statistics (several d×k arrays at a large vocabulary: 250 MB
	// of the power phase's peak at d=100k) are collected during it.
	total, err := inputStats(ctx, inputs[0], o, sel, phase, base, cfg)
	if err != nil {
		return nil, err
	}
	// The other inputs take the projection the first one computed from
	// base (the same one), instead of computing it again: total holds it.
	if phase == "power" {
		phase = "power-like"
	}
	for _, in := range inputs[1:] {
		st, err := inputStats(ctx, in, o, sel, phase, total, cfg)
		if err != nil {
			return nil, err
		}
		if err := total.Merge(st); err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
	}
	total.Header.Shards = 1
	return total, nil
}

// inputStats computes the statistics of phase over the part sel of one
// input file, recording it as the statistics' input.
func inputStats(ctx context.Context, in string, o stream.Options, sel shardSel, phase string, base *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
	src, desc, err := openShard(in, o, sel)
	if err != nil {
		return nil, err
	}
	st, err := shardStats(ctx, in, src, phase, base, cfg)
	stream.Close(src)
	if err != nil {
		return nil, inputNamed(in, err)
	}
	st.Header.Inputs = []implicit.Input{desc}
	return st, nil
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
	for _, in := range inputs {
		src, desc, err := openShard(in, o, sel)
		if err != nil {
			return err
		}
		stream.Close(src)
		if x, ok := h.Covers(desc); ok {
			return fmt.Errorf("%v: %w: %s already covers it (as %v)", desc, implicit.ErrOverlap, last, x)
		}
	}
	var base *implicit.Stats
	switch {
	case h.Phase == 1 && basis != "":
		return usagef("--basis is for appending to phase-2 statistics (the drift of a power pass's Q shows in the W of phase 2)")
	case h.Power > 0:
		base, phase = total, "power-like"
	case h.Phase == 2:
		base = total
		if basis == "" {
			break
		}
		if err := appendDrift(ctx, total, cfg, last, basis, driftTol, inputs); err != nil {
			return err
		}
	}
	add, err := inputsStats(ctx, inputs, o, sel, phase, base, cfg, prog)
	if err != nil {
		return err
	}
	if err := total.Merge(add); err != nil {
		return fmt.Errorf("appending to %s: %w", last, err)
	}
	if err := implicit.WriteStats(ctx, out, total); err != nil {
		return err
	}
	fmt.Fprintf(statsOut, "stats: appended %d input file(s) to %s (%s, %d inputs, %d documents) → %s\n", len(inputs), last, phaseName(h), len(total.Header.Inputs), docs(total), out)
	return nil
}

// appendDrift checks, before inputs are appended to the phase-2 statistics
// last (total), that the basis the updated phase-1 (or power) statistics in
// the file basis give is within tol of last's, and beyond it refuses with
// the command that recomputes phase 2 over all the inputs.
func appendDrift(ctx context.Context, total *implicit.Stats, cfg lda.Config, last, basis string, tol float64, inputs []string) error {
	p1, err := implicit.ReadStats(basis)
	if err != nil {
		return err
	}
	angle, err := basisDrift(ctx, p1, total, cfg, basis, last)
	if err != nil {
		return err
	}
	if angle > tol {
		all := make([]string, 0, len(total.Header.Inputs)+len(inputs))
		for _, in := range total.Header.Inputs {
			all = append(all, quoteArg(in.Path))
		}
		for _, in := range inputs {
			all = append(all, quoteArg(in))
		}
		return fmt.Errorf("basis drift %.3g rad > --drift-tol %g: the basis of %s no longer spans the topics of %s; recompute phase 2 over all the inputs:\n  streamfit stats --phase 2 --basis %s --out %s %s",
			angle, tol, last, basis, quoteArg(basis), quoteArg(last), strings.Join(all, " "))
	}
	fmt.Fprintf(statsOut, "stats: basis drift %.3g rad ≤ %g: appending with the basis of %s\n", angle, tol, last)
	return nil
}

// basisDrift is the largest principal angle between the basis of phase 2
// that the phase-1 (or power) statistics p1, from the file path, give and
// the basis of the phase-2 statistics prev, from the file previous.
func basisDrift(ctx context.Context, p1, prev *implicit.Stats, cfg lda.Config, path, previous string) (float64, error) {
	angle, err := lda.BasisDrift(ctx, p1, prev, cfg)
	if err != nil {
		return 0, fmt.Errorf("%s vs %s: %w", path, previous, err)
	}
	return angle, nil
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

// shardStats computes the statistics of phase over src, read from the file
// path: "1", "power" (the power pass after base), "power-like" (base's power
// pass, for --append) or "2".
func shardStats(ctx context.Context, path string, src stream.DocSource, phase string, base *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
	var (
		st  *implicit.Stats
		err error
	)
	switch phase {
	case "1":
		st, err = lda.Phase1Stats(ctx, src, cfg)
	case "power":
		st, err = lda.PowerStats(ctx, src, base, cfg)
	case "power-like":
		st, err = lda.PowerStatsLike(ctx, src, base, cfg)
	default:
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
	// The exact totals' low words serve merges only; dropped, they are not
	// held through the solve (a d×k array's worth per total at d=100k).
	st.Exact = nil
	m, err := lda.FitStats(ctx, st, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// docRange is the documents [r[0], r[1]) of src (r[1] < 0: to the end),
// read by skipping the others. Batches keep the source's boundaries, cut
// where the range begins and ends, so ranges that begin and end on the
// file's batch boundaries reduce the very batches a pass over the whole file
// does, and their statistics merge exactly to the whole file's.
type docRange struct {
	src stream.DocSource
	r   [2]int64
}

func (d docRange) Info() stream.Info {
	info := d.src.Info()
	if info.Rows >= 0 {
		hi := info.Rows
		if d.r[1] >= 0 {
			hi = min(hi, d.r[1])
		}
		info.Rows = max(0, hi-d.r[0])
	}
	info.NNZ = -1
	return info
}

// Close closes the source read.
func (d docRange) Close() error { return stream.Close(d.src) }

func (d docRange) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		lo, hi := d.r[0], d.r[1]
		if hi < 0 {
			hi = math.MaxInt64
		}
		var end int64 // documents seen
		for b, err := range d.src.Docs(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			s, e := b.Start, b.Start+int64(b.Len())
			end = e
			switch {
			case e <= lo:
				b.Release()
				continue
			case s >= hi:
				b.Release()
				return
			case s < lo || e > hi:
				sub := stream.NewDocs(max(s, lo))
				for i := max(s, lo); i < min(e, hi); i++ {
					sub.AppendDoc(b.Doc(int(i - s)))
				}
				b.Release()
				b = sub
			}
			if !yield(b, nil) {
				return
			}
		}
		if ctx.Err() == nil && (end <= lo || (d.r[1] >= 0 && end < hi)) {
			// A range past the end is a mistake in the shard plan, not a
			// shorter shard.
			yield(nil, fmt.Errorf("the input has %d documents: --docs %s is not within them", end, rangeString(d.r)))
		}
	}
}

// rangeString writes a range as it is given on the command line.
func rangeString(r [2]int64) string {
	if r[1] < 0 {
		return fmt.Sprintf("%d:", r[0])
	}
	return fmt.Sprintf("%d:%d", r[0], r[1])
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
