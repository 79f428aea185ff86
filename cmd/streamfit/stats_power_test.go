package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// powerRun runs the statistics commands of TestStatsPower: stats and merge
// print to a buffer, which each call returns with the exit code and stderr.
type powerRun struct {
	t      *testing.T
	p      func(string) string
	common []string
	out    bytes.Buffer
}

// run runs streamfit args (with the common flags for stats) and returns the
// exit code and everything it printed.
func (r *powerRun) run(args ...string) (int, string) {
	r.t.Helper()
	if args[0] == "stats" {
		args = append(args, r.common...)
	}
	r.out.Reset()
	code, _, msg := streamfit(r.t, args...)
	return code, r.out.String() + msg
}

// must runs args and fails the test unless they succeed.
func (r *powerRun) must(args ...string) string {
	r.t.Helper()
	code, msg := r.run(args...)
	if code != 0 {
		r.t.Fatalf("streamfit %s: exit %d\n%s", strings.Join(args, " "), code, msg)
	}
	return msg
}

// phase computes the statistics of phase over each shard, shard s from
// docword.s.txt into s.name.stats.
func (r *powerRun) phase(phase, basis, name string, shards ...string) {
	r.t.Helper()
	for _, s := range shards {
		r.must(append(statsArgs(r.p, phase, s+"."+name+".stats", basis), r.p("docword."+s+".txt"))...)
	}
}

// merge merges the statistics name of shards into out and returns what it
// printed and the file.
func (r *powerRun) merge(out, name string, shards ...string) (string, []byte) {
	r.t.Helper()
	args := []string{"merge", "--out", r.p(out)}
	for _, s := range shards {
		args = append(args, r.p(s+"."+name+".stats"))
	}
	msg := r.must(args...)
	return msg, readFile(r.t, r.p(out))
}

// fit fits from statistics stats into out and returns model.json.
func (r *powerRun) fit(out, stats string) []byte {
	r.t.Helper()
	return fitFrom(r.t, r.p, stats, out)
}

func newPowerRun(t *testing.T, cc synth.LDAConfig, cuts map[string][2]int, common ...string) *powerRun {
	docs := corpusDocs(t, cc)
	r := &powerRun{t: t, p: tempPaths(t), common: append(common, "--alpha0", "1", "--seed", "3", "--batch-rows", "250", "--workers", "2", "--progress", "off")}
	for name, cut := range cuts {
		writeDocword(t, r.p("docword."+name+".txt"), docs, cc.Vocab, cut[0], cut[1])
	}
	alsoStderr = &r.out
	t.Cleanup(func() { alsoStderr = nil })
	return r
}

// TestStatsPower is the acceptance test of the power phase on a corpus whose
// first sketch does not decay (tail 0.97 with one extra column), where the
// default fit takes an automatic power pass: merge of phase 1 says so and
// prints the next command, phase 2 of phase 1 is refused, shards of the
// power route merged in different orders give byte-identical model.json,
// which is byte-identical to fit on the union (which took the power pass),
// power statistics of
// different bases or passes do not merge, --append of power statistics
// equals their merge, and a damaged power file is refused.
func TestStatsPower(t *testing.T) {
	cuts := map[string][2]int{"a": {0, 750}, "b": {750, 2000}, "c": {2000, 3000}, "all": {0, 3000}}
	r := newPowerRun(t, synth.LDAConfig{Docs: 3000, Vocab: 3000, K: 8, Alpha0: 1, DocLen: 20, Seed: 41}, cuts, "--k", "4", "--oversample", "1")

	r.phase("1", "", "p1", "a", "b", "c")
	msg, _ := r.merge("m1.stats", "p1", "a", "b", "c")
	want := "streamfit stats --phase power --basis " + r.p("m1.stats")
	if !strings.Contains(msg, "> 0.95") || !strings.Contains(msg, want) {
		t.Errorf("merge of phase 1 does not advise a power pass:\n%s", msg)
	}
	code, msg := r.run("stats", "--phase", "2", "--basis", r.p("m1.stats"), "--out", r.p("x.stats"), r.p("docword.a.txt"))
	if code == 0 || !strings.Contains(msg, "power pass") || !strings.Contains(msg, want) {
		t.Errorf("phase 2 of phase-1 statistics that need a power pass: exit %d\n%s", code, msg)
	}
	r.must("stats", "--phase", "2", "--power-iters", "-1", "--basis", r.p("m1.stats"), "--out", r.p("two.stats"), r.p("docword.a.txt"))

	r.phase("power", "m1.stats", "pw", "a", "b", "c")
	msg, mp := r.merge("mp.stats", "pw", "a", "b", "c")
	if _, mp2 := r.merge("mp2.stats", "pw", "c", "a", "b"); !bytes.Equal(mp, mp2) {
		t.Error("power statistics merged as (A,B,C) and (C,A,B) differ")
	}
	if !strings.Contains(msg, "power pass 1") || !strings.Contains(msg, "no power pass due") {
		t.Errorf("merge of power statistics printed:\n%s", msg)
	}
	// One shard of the three files computes Q once and gives the same sums.
	r.must("stats", "--phase", "power", "--basis", r.p("m1.stats"), "--out", r.p("u.pw.stats"), r.p("docword.a.txt"), r.p("docword.b.txt"), r.p("docword.c.txt"))
	u, err := implicit.ReadTopicStats(r.p("u.pw.stats"))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := implicit.ReadTopicStats(r.p("mp.stats"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u.W, merged.W) || !slices.Equal(u.Pair.E2Omega, merged.Pair.E2Omega) || u.Pair.Docs != merged.Pair.Docs || len(u.Header.Inputs) != 3 {
		t.Error("power statistics of one shard of three files differ from the merge of three shards")
	}
	r.phase("2", "mp.stats", "p2", "a", "b", "c")
	r.merge("m2.stats", "p2", "a", "b", "c")
	r.merge("m2r.stats", "p2", "b", "c", "a")
	ref := r.fit("m.json", "m2.stats")
	if got := r.fit("mr.json", "m2r.stats"); !bytes.Equal(got, ref) {
		t.Error("model.json of the power route merged as (A,B,C) and (B,C,A) differ")
	}
	r.must(append([]string{"fit", "lda", "--input", r.p("docword.all.txt"), "--no-timing", "--em-passes", "0", "--out", r.p("fit.json"), "--k", "4", "--oversample", "1"}, r.common...)...)
	if !bytes.Equal(readFile(t, r.p("fit.json")), ref) {
		t.Errorf("model.json of fit on the union differs from the power route: %.3g relative", modelDiff(t, r.p("fit.json"), r.p("m.json")))
	}
	for _, f := range []string{"fit.json", "m.json"} {
		m, err := models.Read(r.p(f))
		if err != nil {
			t.Fatal(err)
		}
		if m.Fit.Passes != 3 {
			t.Errorf("%s: %d passes, want 3", f, m.Fit.Passes)
		}
	}

	// Refusals: power statistics of another Q (from shard A's own phase
	// 1), phase-1 with power statistics, a flipped bit.
	r.must("stats", "--phase", "power", "--basis", r.p("a.p1.stats"), "--out", r.p("a.other.stats"), r.p("docword.a.txt"))
	for _, c := range []struct{ a, b, want string }{
		{"b.pw.stats", "a.other.stats", "basis"},
		{"b.pw.stats", "a.p1.stats", "power pass is 0"},
	} {
		if code, msg := r.run("merge", "--out", r.p("bad.stats"), r.p(c.a), r.p(c.b)); code == 0 || !strings.Contains(msg, c.want) {
			t.Errorf("merge of %s and %s: exit %d, want %q:\n%s", c.a, c.b, code, c.want, msg)
		}
	}
	flip := bytes.Clone(readFile(t, r.p("a.pw.stats")))
	flip[len(flip)-30] ^= 0x04
	os.WriteFile(r.p("flip.stats"), flip, 0o644)
	if code, msg := r.run("merge", "--out", r.p("bad.stats"), r.p("b.pw.stats"), r.p("flip.stats")); code == 0 || !strings.Contains(msg, "checksum") {
		t.Errorf("merge with a damaged power file: exit %d\n%s", code, msg)
	}
	if _, err := os.Stat(r.p("bad.stats")); !os.IsNotExist(err) {
		t.Error("a refused merge left its output")
	}
	if code, msg := r.run("stats", "--phase", "power", "--basis", r.p("m2.stats"), "--out", r.p("bad.stats"), r.p("docword.a.txt")); code == 0 || !strings.Contains(msg, "phase-2") {
		t.Errorf("power phase of phase-2 statistics: exit %d\n%s", code, msg)
	}

	// --append of power statistics reuses their Q: A+B appended with C
	// is the merge of the three.
	r.merge("ab.pw.stats", "pw", "a", "b")
	r.must("stats", "--append", r.p("ab.pw.stats"), "--out", r.p("abc.pw.stats"), r.p("docword.c.txt"))
	if !bytes.Equal(readFile(t, r.p("abc.pw.stats")), mp) {
		t.Error("power statistics of A and B appended with C differ from the merge of the three")
	}
	if code, msg := r.run("stats", "--append", r.p("ab.pw.stats"), "--basis", r.p("m1.stats"), "--out", r.p("bad.stats"), r.p("docword.c.txt")); code == 0 || !strings.Contains(msg, "--basis is for appending to phase-2") {
		t.Errorf("--append to power statistics with --basis: exit %d\n%s", code, msg)
	}
	// A nightly shard of the power pass reuses the running Q with
	// --previous and merges into the running statistics.
	msg = r.must("stats", "--phase", "power", "--basis", r.p("m1.stats"), "--previous", r.p("ab.pw.stats"), "--out", r.p("c.prev.pw.stats"), r.p("docword.c.txt"))
	if !strings.Contains(msg, "reusing the Q of") {
		t.Errorf("power phase with --previous printed:\n%s", msg)
	}
	if _, got := r.merge("abc2.pw.stats", "pw", "ab", "c.prev"); !bytes.Equal(got, mp) {
		t.Error("power statistics of C with the Q of --previous A+B, merged with them, differ from the merge of the three")
	}
	if code, msg := r.run("stats", "--phase", "power", "--basis", r.p("m1.stats"), "--previous", r.p("m1.stats"), "--out", r.p("bad.stats"), r.p("docword.c.txt")); code == 0 || !strings.Contains(msg, "power pass 1") {
		t.Errorf("power phase with --previous of another pass: exit %d\n%s", code, msg)
	}
}

// TestStatsPowerForced forces a power pass (--power-iters 1) on a
// well-conditioned corpus, where the power route of two shards gives the
// model.json of fit --power-iters 1 on the union, and
// phase 2 refuses a basis without the power pass it was told of.
func TestStatsPowerForced(t *testing.T) {
	cuts := map[string][2]int{"a": {0, 1500}, "b": {1500, 3000}, "all": {0, 3000}}
	r := newPowerRun(t, synth.LDAConfig{Docs: 3000, Vocab: 2000, K: 4, Alpha0: 1, DocLen: 50, Seed: 41}, cuts, "--k", "4")
	r.phase("1", "", "p1", "a", "b")
	msg, _ := r.merge("m1.stats", "p1", "b", "a")
	if !strings.Contains(msg, "no power pass due") {
		t.Errorf("merge of a decaying phase 1 printed:\n%s", msg)
	}
	code, msg := r.run("stats", "--phase", "2", "--power-iters", "1", "--basis", r.p("m1.stats"), "--out", r.p("x.stats"), r.p("docword.a.txt"))
	if code == 0 || !strings.Contains(msg, "PowerIters = 1, but the basis holds 0 power passes") || !strings.Contains(msg, "PowerIters is --power-iters") {
		t.Errorf("phase 2 --power-iters 1 of phase-1 statistics: exit %d\n%s", code, msg)
	}
	r.phase("power", "m1.stats", "pw", "a", "b")
	r.merge("mp.stats", "pw", "a", "b")
	for _, s := range []string{"a", "b"} {
		r.must("stats", "--phase", "2", "--power-iters", "1", "--basis", r.p("mp.stats"), "--out", r.p(s+".p2.stats"), r.p("docword."+s+".txt"))
	}
	r.merge("m2.stats", "p2", "a", "b")
	ref := r.fit("m.json", "m2.stats")
	r.must(append([]string{"fit", "lda", "--input", r.p("docword.all.txt"), "--no-timing", "--em-passes", "0", "--out", r.p("fit.json"), "--k", "4", "--power-iters", "1"}, r.common...)...)
	if !bytes.Equal(readFile(t, r.p("fit.json")), ref) {
		t.Errorf("model.json of fit --power-iters 1 on the union differs from the power route: %.3g relative", modelDiff(t, r.p("fit.json"), r.p("m.json")))
	}
}
