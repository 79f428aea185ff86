package main

import (
	"os"
	"strings"
	"testing"
)

// A dense model's nightly step: pass 1 is appended to freely; an append to
// pass 2 checks the drift of the whitening against the updated pass 1 and
// refuses it beyond --drift-tol (leaving no output); appends and merges
// refuse rows already covered.
func TestDenseStatsAppend(t *testing.T) {
	p := tempPaths(t)
	in := p("g.parquet")
	mustRun(t, "gen", "gmm", "--rows", "3000", "--d", "6", "--k", "2", "--row-group", "600", "--seed", "3", "--out", in, "--truth", p("t.json"))
	common := []string{"--k", "2", "--batch-rows", "200", "--progress", "off"}
	run := func(args ...string) {
		t.Helper()
		mustRun(t, append(append([]string{"stats", "gmm"}, args...), common...)...)
	}
	run("--row-groups", "0:3", "--out", p("p1.stats"), in)
	run("--phase", "2", "--basis", p("p1.stats"), "--row-groups", "0:3", "--out", p("p2.stats"), in)

	code, _, msg := streamfit(t, append([]string{"stats", "gmm", "--append", p("p1.stats"), "--row-groups", "2:4", "--out", p("bad.stats"), in}, common...)...)
	if code != 1 || !strings.Contains(msg, "already covers it") {
		t.Errorf("append of covered row groups: exit %d: %s", code, msg)
	}
	run("--append", p("p1.stats"), "--row-groups", "3:", "--out", p("p1all.stats"), in)
	run("--row-groups", "3:", "--out", p("p1b.stats"), in)
	code, _, msg = streamfit(t, "merge", "--out", p("bad.stats"), p("p1all.stats"), p("p1b.stats"))
	if code != 1 || !strings.Contains(msg, "share an input") {
		t.Errorf("merge of overlapping shards: exit %d: %s", code, msg)
	}

	code, _, msg = streamfit(t, append([]string{"stats", "gmm", "--append", p("p2.stats"), "--basis", p("p1all.stats"), "--drift-tol", "1e-12", "--row-groups", "3:", "--out", p("bad.stats"), in}, common...)...)
	if code != 1 || !strings.Contains(msg, "drifted") || !strings.Contains(msg, "recompute pass 2") {
		t.Errorf("append beyond the drift tolerance: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(p("bad.stats")); !os.IsNotExist(err) {
		t.Error("a refused append or merge left its output")
	}
	mustRun(t, append([]string{"stats", "gmm", "--append", p("p2.stats"), "--basis", p("p1all.stats"), "--drift-tol", "1", "--row-groups", "3:", "--out", p("p2all.stats"), in}, common...)...)
	// Pass 2 of multiview recovers from the cross moments of its own rows.
	mv := []string{"--k", "2", "--batch-rows", "200", "--progress", "off"}
	mustRun(t, append([]string{"stats", "multiview", "--row-groups", "0:3", "--out", p("v1.stats"), in}, mv...)...)
	mustRun(t, append([]string{"stats", "multiview", "--phase", "2", "--basis", p("v1.stats"), "--row-groups", "0:3", "--out", p("v2.stats"), in}, mv...)...)
	code, _, msg = streamfit(t, append([]string{"stats", "multiview", "--append", p("v2.stats"), "--row-groups", "3:", "--out", p("bad.stats"), in}, mv...)...)
	if code != 1 || !strings.Contains(msg, "cannot be appended") {
		t.Errorf("append to pass 2 of multiview: exit %d: %s", code, msg)
	}
	mustRun(t, "fit", "gmm", "--from-stats", p("p2all.stats"), "--no-timing", "--progress", "off", "--out", p("m.json"))
	if b := readFile(t, p("m.json")); !strings.Contains(string(b), `"rows": 3000`) {
		t.Errorf("the fit from the appended statistics does not count 3000 rows:\n%s", b)
	}
}
