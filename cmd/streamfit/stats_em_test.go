package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// TestStatsEMRoute runs the default LDA fit as a statistics route over
// three shards: phases 1 and 2, the EM start (fit --from-stats
// --em-start), then per EM pass `stats --phase em --model`
// on every shard, `merge` (in another order each pass) and `fit
// --from-stats --model` (the M-step), until the passes end; model.json is
// byte-identical to `fit` (default EM passes) on the union. EM statistics
// of another model, a shard given twice, and a pass of the refined model
// are refused.
func TestStatsEMRoute(t *testing.T) {
	p := shardCorpus(t)
	common := []string{"--batch-rows", "250", "--progress", "off", "--workers", "2"}
	seed := []string{"--k", "4", "--alpha0", "1", "--seed", "3"}
	shards := []string{"a", "b", "c"}
	for _, phase := range []string{"1", "2"} {
		var outs []string
		for _, s := range shards {
			args := statsArgs(p, phase, s+phase+".stats", map[string]string{"1": "", "2": "m1.stats"}[phase])
			mustRun(t, append(append(append(args, p("docword."+s+".txt")), common...), seed...)...)
			outs = append(outs, s+phase+".stats")
		}
		mergeFiles(t, p, "m"+phase+".stats", outs...)
	}
	// The start: --em-start, the same model as --solver simultaneous
	// --em-passes 0; with --input it is refused.
	mustRun(t, "fit", "lda", "--from-stats", p("m2.stats"), "--em-start", "--no-timing", "--progress", "off", "--out", p("em0.json"))
	mustRun(t, "fit", "lda", "--from-stats", p("m2.stats"), "--solver", "simultaneous", "--em-passes", "0", "--no-timing", "--progress", "off", "--out", p("em0b.json"))
	if !bytes.Equal(readFile(t, p("em0.json")), readFile(t, p("em0b.json"))) {
		t.Error("--em-start differs from --solver simultaneous --em-passes 0")
	}
	if out, code := runCLI(t, "fit", "lda", "--from-stats", p("m2.stats"), "--em-start", "--input", p("docword.a.txt"), "--out", p("x.json")); code != 2 || !strings.Contains(out, "--em-start") {
		t.Errorf("--em-start with --input: exit %d: %s", code, out)
	}
	model := "em0.json"
	for pass := 1; ; pass++ {
		if pass > 10 {
			t.Fatal("the EM passes did not end")
		}
		var outs []string
		for _, s := range shards {
			out := fmt.Sprintf("%s.em%d.stats", s, pass)
			mustRun(t, append([]string{"stats", "--phase", "em", "--model", p(model), "--out", p(out), p("docword." + s + ".txt")}, common...)...)
			outs = append(outs, out)
		}
		if pass%2 == 0 {
			outs[0], outs[2] = outs[2], outs[0]
		}
		mergeFiles(t, p, fmt.Sprintf("em%d.stats", pass), outs...)
		if pass == 2 {
			// Statistics of the pass before (another model) and a shard
			// given twice are refused.
			if out, code := runCLI(t, "merge", "--out", p("x.stats"), p("em2.stats"), p("a.em1.stats")); code != 1 || !strings.Contains(out, "incompatible") {
				t.Errorf("merged EM statistics of two models: exit %d: %s", code, out)
			}
			if out, code := runCLI(t, "merge", "--out", p("x.stats"), p("em2.stats"), p("a.em2.stats")); code != 1 || !strings.Contains(out, "share an input") {
				t.Errorf("an EM shard given twice: exit %d: %s", code, out)
			}
			if out, code := runCLI(t, "fit", "lda", "--from-stats", p("em1.stats"), "--model", p(model), "--out", p("x.json")); code != 1 || !strings.Contains(out, "another model") {
				t.Errorf("the M-step of another model's statistics: exit %d: %s", code, out)
			}
		}
		next := fmt.Sprintf("em%d.json", pass)
		mustRun(t, "fit", "lda", "--from-stats", p(fmt.Sprintf("em%d.stats", pass)), "--model", p(model), "--no-timing", "--out", p(next))
		model = next
		m, err := models.Read(p(model))
		if err != nil {
			t.Fatal(err)
		}
		if m.Fit.EM.Converged || m.Fit.EM.Passes >= 10 {
			break
		}
	}
	mustRun(t, append(append([]string{"fit", "lda", "--input", p("docword.all.txt"), "--no-timing", "--out", p("fit.json")}, common...), seed...)...)
	if !bytes.Equal(readFile(t, p(model)), readFile(t, p("fit.json"))) {
		t.Errorf("the EM statistics route's %s differs from fit on the union", model)
	}
	if out, code := runCLI(t, "stats", "--phase", "em", "--model", p(model), "--out", p("x.stats"), p("docword.a.txt")); code != 1 || !strings.Contains(out, "ended") {
		t.Errorf("an EM pass of the refined model: exit %d: %s", code, out)
	}
}

// runCLI runs streamfit and returns its stderr and exit status.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	code, _, errs := streamfit(t, args...)
	return errs, code
}
