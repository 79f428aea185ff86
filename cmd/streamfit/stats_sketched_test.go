package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The sketched path's nightly step (gmm, d above --exact-dim): rows are
// appended to pass 1 (the first sketch) to give the whole file's pass-1
// statistics bit for bit; the passes after it carry the range basis of
// the merged pass before, so an append to them is refused, and so are
// merges of shards computed with different bases or seeds, leaving no
// output.
func TestSketchedStatsAppend(t *testing.T) {
	p := tempPaths(t)
	in := p("g.parquet")
	mustRun(t, "gen", "gmm", "--rows", "3000", "--d", "40", "--k", "3", "--row-group", "600", "--seed", "3", "--out", in, "--truth", p("t.json"))
	common := []string{"--k", "3", "--exact-dim", "16", "--batch-rows", "200", "--progress", "off"}
	run := func(args ...string) {
		t.Helper()
		mustRun(t, append(append([]string{"stats", "gmm"}, args...), common...)...)
	}
	refused := func(want string, args ...string) {
		t.Helper()
		code, _, msg := streamfit(t, append(append([]string{"stats", "gmm"}, args...), common...)...)
		if code != 1 || !strings.Contains(msg, want) {
			t.Errorf("%v: exit %d, want 1 and %q: %s", args, code, want, msg)
		}
	}
	run("--row-groups", "0:3", "--out", p("p1.stats"), in)
	run("--append", p("p1.stats"), "--row-groups", "3:", "--out", p("p1all.stats"), in)
	run("--out", p("w1.stats"), in)
	if !bytes.Equal(statsBody(t, p("p1all.stats")), statsBody(t, p("w1.stats"))) {
		t.Error("pass 1 appended to differs from pass 1 of the whole file")
	}
	run("--phase", "2", "--basis", p("p1all.stats"), "--out", p("p2.stats"), in)
	refused("cannot be appended", "--append", p("p2.stats"), "--row-groups", "3:", "--out", p("bad.stats"), in)
	// Shards of pass 2 whose bases (pass 1 over 3 or over 5 row groups) differ.
	run("--phase", "2", "--basis", p("p1.stats"), "--row-groups", "0:3", "--out", p("a2.stats"), in)
	run("--phase", "2", "--basis", p("p1all.stats"), "--row-groups", "3:", "--out", p("b2.stats"), in)
	code, _, msg := streamfit(t, "merge", "--out", p("bad.stats"), p("a2.stats"), p("b2.stats"))
	if code != 1 || !strings.Contains(msg, "basis") {
		t.Errorf("merge of pass-2 shards of different bases: exit %d: %s", code, msg)
	}
	// The seed draws the first sketch's test matrix.
	run("--row-groups", "3:", "--seed", "2", "--out", p("s2.stats"), in)
	code, _, msg = streamfit(t, "merge", "--out", p("bad.stats"), p("p1.stats"), p("s2.stats"))
	if code != 1 || !strings.Contains(msg, "seed") {
		t.Errorf("merge of pass-1 shards of different seeds: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(p("bad.stats")); !os.IsNotExist(err) {
		t.Error("a refused append or merge left its output")
	}
}
