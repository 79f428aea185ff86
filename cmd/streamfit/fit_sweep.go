package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/report"
	"github.com/streamfit/streamfit/stream"
)

// kFlag is --k: one number, or for lda and topic a list ("10,20,50") or a
// range ("10:100:10", from:to:step) of them fitted in one sweep. *k holds
// the largest.
type kFlag struct {
	k  *int
	ks []int
}

func (f *kFlag) String() string {
	if f == nil || f.k == nil {
		return ""
	}
	if len(f.ks) > 1 {
		return lda.FormatKs(f.ks)
	}
	return strconv.Itoa(*f.k)
}

// Get is the largest k, which the value checks of every int flag read.
func (f *kFlag) Get() any { return *f.k }

func (f *kFlag) Set(s string) error {
	ks, err := lda.ParseKs(s)
	if err != nil {
		return err
	}
	f.ks, *f.k = ks, ks[len(ks)-1]
	return nil
}

// sweepFlags are the flags of a fit of several k (`fit lda --k 10,20,50`).
type sweepFlags struct {
	heldout string
	json    bool
	start   string // --sweep-start: "" (own, shared from statistics), own or shared
}

func addSweepFlags(fs *flag.FlagSet) *sweepFlags {
	s := &sweepFlags{}
	fs.StringVar(&s.heldout, "heldout", "", "with a list of --k: the held-out documents every k is scored on (default: every 10th document of --input held out, the models fitted on the others)")
	fs.StringVar(&s.start, "sweep-start", "", "with a list of --k over a vocabulary whitened by a sketch: own (the default) gives each smaller k the spectral passes its own fit takes, so every model is that k's default fit; shared starts them from the largest k's passes, in fewer passes but at other EM optima (fit --from-stats: always shared, as the statistics hold the largest k's passes)")
	fs.BoolVar(&s.json, "json", false, "with a list of --k: print the table of scores, the recommended k and the model files as JSON on stdout (streamfit report --sweep draws it)")
	return s
}

// sweepOut is the model file of k topics of a sweep (lda.SweepOut): --out
// with {k} replaced, or -k<k> before its extension when it has no {k}.
func sweepOut(out string, k int) string { return lda.SweepOut(out, k) }

// checkSweep refuses the settings a sweep does not serve.
func (f *fitFlags) checkSweep() error {
	switch {
	case f.fromStats == "" && f.input == "":
		return usagef("--input is required")
	case f.fromStats != "" && f.input == "" && f.sweep.heldout != "":
		return usagef("--heldout scores the models of --from-stats after their EM passes over --input, and their coherence over it: give --input")
	case *f.topic.ck.dir != "":
		return usagef("a list of --k is not checkpointed; leave out --checkpoint")
	case f.topic.topicsParquet != "":
		return usagef("a list of --k writes a model file per k; leave out --topics-parquet")
	case f.sweep.start != "" && f.sweep.start != "own" && f.sweep.start != "shared":
		return usagef("--sweep-start %s: want own or shared", f.sweep.start)
	case f.fromStats != "" && f.sweep.start == "own" && !strings.Contains(f.fromStats, "{k}"):
		return usagef("--sweep-start own: the statistics of the largest k hold its passes only, from which the smaller k start (shared); for each k's own start give each k's statistics, --from-stats 'p2-k{k}.stats'")
	case strings.Contains(f.fromStats, "{k}") && f.sweep.start == "shared":
		return usagef("--sweep-start shared starts the smaller k from the largest k's statistics: give that file alone to --from-stats")
	}
	return nil
}

// fitSweep fits every k of --k from one set of spectral passes (or the
// statistics of its largest k, --from-stats) and shared EM passes
// (lda.FitK, lda.FitKStats), writes a model file per k, and prints each
// k's scores and the recommended k.
func (e *env) fitSweep(ctx context.Context, f *fitFlags, s *lda.Settings) error {
	if err := f.checkSweep(); err != nil {
		return err
	}
	ks := f.ks.ks
	outs := make([]string, len(ks))
	for i, k := range ks {
		outs[i] = sweepOut(f.out, k)
	}
	ins := []string{f.input, f.o.VocabPath, f.sweep.heldout, f.fromStats}
	if strings.Contains(f.fromStats, "{k}") {
		for _, k := range ks {
			ins = append(ins, sweepOut(f.fromStats, k))
		}
	}
	if err := checkOutputs(ins, outs...); err != nil {
		return err
	}
	cpu0 := sysinfo.CPUTime()
	p, done := e.startProgress(*f.prog, "fit "+f.kind.Name(), 0)
	defer done()
	f.o.Progress = p
	sw, plan, err := e.runSweep(ctx, f, s, p)
	if err != nil {
		return err
	}
	for i, m := range sw.Models {
		g := *f
		g.out = outs[i]
		if err := e.writeTopicModel(m, &g); err != nil {
			return err
		}
	}
	done()
	from := fmt.Sprintf("from %d passes over the documents", sw.Passes)
	if f.fromStats != "" {
		from = "from the statistics " + f.fromStats
		if f.input != "" {
			from += fmt.Sprintf(" and %d EM passes over the documents", sweepEMPasses(sw))
		}
	}
	forecast := ""
	if plan != nil && plan.CPUSeconds >= 0 {
		forecast = fmt.Sprintf(" (the plan forecast %.1fs for the fits, without the scores)", plan.CPUSeconds)
	}
	e.printf("fit %s: %d models (k = %s) %s, CPU %.1fs%s → %s\n", f.kind.Name(), len(ks), f.ks.String(), from, (sysinfo.CPUTime() - cpu0).Seconds(), forecast, strings.Join(outs, ", "))
	if f.sweep.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report.SweepFile{Sweep: *sw, Files: outs})
	}
	if sw.Recommended == 0 {
		switch {
		case f.topic.emStart:
			e.printf("fit %s: the start of every k's EM passes; run them over the shards per model (stats --phase em --model M.json, merge, fit --from-stats --model M.json)\n", f.kind.Name())
		case f.input == "":
			e.printf("fit %s: the spectral fits of %s; the EM passes and the scores need the documents: give them with --input, and the held-out documents with --heldout\n", f.kind.Name(), f.fromStats)
		default:
			e.printf("fit %s: not scored: the statistics hold every document of --input; give held-out documents with --heldout to score every k and recommend one\n", f.kind.Name())
		}
		return nil
	}
	printSweep(e.stdout, sw)
	return nil
}

// sweepEMPasses is the EM passes of a sweep whose EM passes were shared:
// those of the model that took the most.
func sweepEMPasses(sw *lda.Sweep) int {
	em := 0
	for _, s := range sw.Scores {
		em = max(em, s.EMPasses)
	}
	return em
}

// printSweep prints the table of a sweep's scores and its recommendation.
func printSweep(w io.Writer, sw *lda.Sweep) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "k\theld-out perplexity\tUMass\tNPMI\tdiversity\tEM passes\t\n")
	for _, sc := range sw.Scores {
		fmt.Fprintf(tw, "%d\t%.1f\t%.3f\t%.3f\t%.2f\t%d\t\n", sc.K, sc.Perplexity, sc.UMass, sc.NPMI, sc.Diversity, sc.EMPasses)
	}
	tw.Flush()
	fmt.Fprintf(w, "recommended k=%d: %s (held out: %s)\n", sw.Recommended, sw.Rule, sw.HeldOut)
}

// runSweep opens the documents (--input, when given) and the held-out
// documents (--heldout) and runs the sweep: FitK over the documents, or
// FitKStats from --from-stats, with the EM passes over --input when given
// (else the spectral fits, as fit --from-stats without --input writes),
// scored when there are held-out documents; FitK's plan is printed and
// returned.
func (e *env) runSweep(ctx context.Context, f *fitFlags, s *lda.Settings, p *stream.Progress) (*lda.Sweep, *lda.SweepPlan, error) {
	cfg := f.config(s)
	var src stream.DocSource
	if f.input != "" {
		var err error
		if src, err = e.openDocs(f.topic.spill, "fit", f.input, *f.o); err != nil {
			return nil, nil, err
		}
		defer stream.Close(src)
		cfg.Progress = e.ldaProgress(p, f.kind.Name(), src.Info().Rows)
	}
	opt := lda.SweepOptions{SharedStart: f.sweep.start == "shared"}
	if f.sweep.heldout != "" {
		o := *f.o
		o.Progress = nil
		ho, err := stream.Open(f.sweep.heldout, o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.sweep.heldout, err)
		}
		defer stream.Close(ho)
		opt.HeldOut = ho
	}
	if f.fromStats == "" {
		var plan *lda.SweepPlan
		opt.OnPlan = func(sp *lda.SweepPlan) {
			e.printf("%v\n", sp)
			plan = sp
		}
		sw, err := lda.FitK(ctx, src, f.ks.ks, cfg, opt)
		return sw, plan, inputNamed(f.input, err)
	}
	sc := f.statsConfig(s)
	sc.Progress = cfg.Progress
	if src == nil && !f.topic.emStart {
		sc.EM = lda.EM{} // the pure spectral fits, as fit --from-stats without --input
	}
	opt.NoScore = opt.HeldOut == nil
	if strings.Contains(f.fromStats, "{k}") {
		// Each k's statistics of its own: each k's own start.
		var sts []*implicit.TopicStats
		for _, k := range f.ks.ks {
			st, err := implicit.ReadTopicStats(sweepOut(f.fromStats, k))
			if err != nil {
				return nil, nil, err
			}
			sts = append(sts, st)
		}
		sw, err := lda.FitKStatsEach(ctx, sts, src, f.ks.ks, sc, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.fromStats, err)
		}
		return sw, nil, nil
	}
	st, err := implicit.ReadTopicStats(f.fromStats)
	if err != nil {
		return nil, nil, err
	}
	sw, err := lda.FitKStats(ctx, st, src, f.ks.ks, sc, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.fromStats, err)
	}
	return sw, nil, nil
}
