package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
)

// statsAbout is the help of `streamfit stats`: what every model's passes
// share, then the topic models' and the dense models' own.
const statsAbout = `Computes the statistics of one of the passes of a fit of MODEL (lda when
not given) over the input files, which form one shard, and writes them
(versioned, checksummed, zstd-compressed, atomically) for ` + "`streamfit merge`" + ` and
` + "`streamfit fit MODEL --from-stats`" + `. Merges of shards cut at batch boundaries
give the statistics of their union bit for bit, and a fit from them the
model of a fit over the union.

Every statistics file lists the input files it covers (path, size, mtime and
a fingerprint of size and first and last 64 KiB, and the range of documents
or rows under --docs or --row-groups); merges of statistics that share one
are refused.

Sharding one big file: --row-groups A:B reads only row groups A..B-1 of a
Parquet file (record batches of an Arrow IPC file); ` + "`streamfit inspect FILE`" + `
lists them with their rows. The rows keep their numbers in the whole file
(from the footer, without decoding the row groups before A), and statistics
of ranges that partition the file merge to exactly those of the whole file.
--docs A:B selects rows of any input, but decodes the file up to B.
--append LAST.stats computes the statistics of the new INPUTs only (any
input LAST covers is refused) with LAST's pass and settings, and writes
LAST plus them atomically (to LAST unless --out is given): the nightly step.
`

// statsFlags are the flags of `stats MODEL`: those of every model's passes
// and the model's settings (models.Settings, as the statistics of a pass
// depend on them); the topic models add --previous and --model.
type statsFlags struct {
	kind      models.Kind
	kindGiven bool // the model was named (else lda, or the basis file's)
	fs        *flag.FlagSet
	settings  models.Settings
	common    models.Common
	ks        kFlag // --k, which sets common.K
	o         *stream.Options
	prog      *progressMode
	phase     string
	basis     string
	appendTo  string
	out       string
	driftTol  float64
	previous  string // topic models: running statistics whose basis to reuse
	emModel   string // topic models, --phase em: the model whose next EM pass to compute
	docs      string
	pieces    string
	inputs    []string
	sel       shardSel
}

// statsKind returns the model args[0] names and the arguments after it,
// or lda and all of args when args[0] names none.
func statsKind(args []string) (k models.Kind, rest []string, named bool) {
	if len(args) > 0 {
		if k, err := models.Lookup(args[0]); err == nil {
			return k, args[1:], true
		}
	}
	return lda.Kind, args, false
}

// newStatsFlags makes the flag set of `stats MODEL`.
func newStatsFlags(e *env, k models.Kind) *statsFlags {
	f := &statsFlags{kind: k, settings: k.Settings(models.StatsFlags)}
	ds, dense := f.settings.(models.DenseSettings)
	about := statsAbout + topicStatsAbout
	if dense {
		about = statsAbout + denseStatsAbout + "\n\n" + k.Name() + ": " + ds.Passes(models.Common{}).About
	}
	fs := newFlags("stats "+k.Name(), "INPUT...", about)
	f.fs = fs
	f.o = e.addReadFlags(fs)
	fs.StringVar(&f.out, "out", "shard.stats", "output statistics file (with --append: LAST itself)")
	f.common.K, f.ks.k = 10, &f.common.K
	fs.Var(&f.ks, "k", "number of topics, components or states (default 10); lda and topic also take the list or range of a sweep (fit --k 10,20,50), whose statistics are those of its largest k")
	fs.Uint64Var(&f.common.Seed, "seed", 1, "random seed: determines the sketch Ω; every shard must use the same")
	fs.StringVar(&f.appendTo, "append", "", "existing statistics to which to add those of the INPUTs (see above)")
	fs.Float64Var(&f.driftTol, "drift-tol", 0.05, "largest principal angle (radians) between bases for which --previous is reused, or beyond which --append to a pass with a basis is refused")
	fs.StringVar(&f.docs, "docs", "", "FIRST:END: only documents (rows) FIRST..END-1 of the (single) input, counted from 0, either end optional; "+
		"statistics of complementary ranges merge exactly to the whole file's when they begin and end where its batches do: at row-group boundaries "+
		"(documents in Parquet or Arrow, whose batches are cut by --batch-entries), else at multiples of --batch-rows")
	fs.StringVar(&f.pieces, "row-groups", "", "FIRST:END: only row groups FIRST..END-1 of the (single) Parquet input, or record batches of an Arrow IPC file, "+
		"counted from 0, either end optional; only those are read (see `streamfit inspect`)")
	f.prog = addProgressFlag(fs)
	if dense {
		addDenseFlags(fs, f.o, models.GroupOf(k) != "")
		fs.StringVar(&f.phase, "phase", "1", "the pass: 1, 2, ... (see above)")
		fs.StringVar(&f.basis, "basis", "", "pass N > 1: the merged statistics of pass N−1; with --append to a pass with a basis: the updated pass before it, for the drift check")
	} else {
		addDocFlags(fs, f.o)
		addTopicStatsFlags(f)
	}
	f.settings.Flags(fs)
	return f
}

// parseStats parses the flags of `stats MODEL` and checks those every
// model shares.
func (e *env) parseStats(k models.Kind, args []string) (*statsFlags, error) {
	f := newStatsFlags(e, k)
	inputs, err := e.parse(f.fs, args)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, usagef("at least one INPUT file is required")
	}
	f.inputs, f.common.Workers = inputs, f.o.Workers
	if f.sel.docs, err = parseDocRange(f.docs); err != nil {
		return nil, err
	}
	if f.sel.pieces, err = parseRange("row-groups", f.pieces, "row groups FIRST..END-1 counted from 0"); err != nil {
		return nil, err
	}
	switch {
	case f.sel.docs != nil && f.sel.pieces != nil:
		return nil, usagef("--docs and --row-groups both select a part of the input: give one")
	case f.sel.docs != nil && len(inputs) != 1:
		return nil, usagef("--docs takes one INPUT file, not %d", len(inputs))
	case f.sel.pieces != nil && len(inputs) != 1:
		return nil, usagef("--row-groups takes one INPUT file, not %d: row groups are numbered within one file", len(inputs))
	case f.common.K < 1:
		return nil, usagef("--k=%d: need at least one topic", f.common.K)
	case len(f.ks.ks) > 1 && !f.isTopic():
		return nil, usagef("--k %s: a list of k is for lda and topic", f.ks.String())
	}
	if err := f.settings.Check(models.Check{Given: f.given, Read: f.o}); err != nil {
		return nil, usageError{err.Error()}
	}
	if f.appendTo != "" && !f.given("out") {
		f.out = f.appendTo // statistics appended to in place
	}
	return f, checkOutputs(append([]string{f.basis, f.previous, f.o.VocabPath}, inputs...), f.out)
}

// isTopic reports whether the model is lda or topic (not a dense model).
func (f *statsFlags) isTopic() bool {
	_, ok := f.settings.(*lda.Settings)
	return ok
}

// given reports whether the flag name was given on the command line.
func (f *statsFlags) given(name string) bool { return set(f.fs, name) }

func runStats(ctx context.Context, e *env, args []string) error {
	k, args, named := statsKind(args)
	f, err := e.parseStats(k, args)
	if err != nil {
		return err
	}
	f.kindGiven = named
	if ds, ok := f.settings.(models.DenseSettings); ok {
		return e.denseStats(ctx, f, ds)
	}
	return e.topicStats(ctx, f, f.settings.(*lda.Settings))
}

// shardParts lists the parts of the inputs that sel selects.
func shardParts(inputs []string, sel shardSel) []shard.Part {
	parts := make([]shard.Part, len(inputs))
	for i, in := range inputs {
		parts[i] = shard.Part{Path: in, Rows: sel.docs, Pieces: sel.pieces}
	}
	return parts
}

// shardSel is the part of each input file a shard covers: a range of
// documents (--docs), of row groups (--row-groups), or all of it (nil).
type shardSel struct {
	docs, pieces *[2]int64
}

// quoteArg quotes s for a POSIX shell when it holds anything but plain
// characters.
func quoteArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// appendErr names the file last in an append's refusal of an input it
// covers, and makes a bad range of row groups a usage error.
func appendErr(err error, last string) error {
	var ce *shard.CoveredError
	if errors.As(err, &ce) {
		return fmt.Errorf("%v: %w: %s already covers it (as %v)", ce.Input, statsfile.ErrOverlap, last, ce.As)
	}
	return denseErr(err)
}

// denseErr makes a range of row groups beyond the file a usage error.
func denseErr(err error) error {
	if errors.Is(err, shard.ErrRange) {
		return usageError{"--row-groups: " + err.Error()}
	}
	return err
}
