package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestStatsMergeExact checks the promise of exact statistics: shards merged
// in any order and grouping and the statistics of the union give
// byte-identical model.json files (--no-timing), as long as the shards are
// cut at the union's batch boundaries (here 750, 1250 and 1000 documents in
// batches of 250), and `fit --em-passes 0` on the union, whose passes keep
// the same exact totals, gives that model.json too.
func TestStatsMergeExact(t *testing.T) {
	p := shardCorpus(t)
	common := []string{"--k", "4", "--alpha0", "1", "--seed", "3", "--batch-rows", "250", "--progress", "off"}
	stats := func(phase, out, basis string, inputs ...string) {
		t.Helper()
		args := statsArgs(p, phase, out, basis)
		for _, in := range inputs {
			args = append(args, p("docword."+in+".txt"))
		}
		mustRun(t, append(append(args, common...), "--workers", "2")...)
	}
	merge := func(out string, in ...string) []byte { t.Helper(); return mergeFiles(t, p, out, in...) }
	fitStats := func(out, stats string) []byte { t.Helper(); return fitFrom(t, p, stats, out) }

	// Phase 1: every grouping of the three shards gives the same file.
	for _, s := range []string{"a", "b", "c"} {
		stats("1", s+"1.stats", "", s)
	}
	ref1 := merge("m1.stats", "a1.stats", "b1.stats", "c1.stats")
	merge("ab1.stats", "a1.stats", "b1.stats")
	merge("bc1.stats", "b1.stats", "c1.stats")
	merge("ca1.stats", "c1.stats", "a1.stats")
	for name, got := range map[string][]byte{
		"((A,B),C)": merge("x.stats", "ab1.stats", "c1.stats"),
		"(A,(B,C))": merge("x.stats", "a1.stats", "bc1.stats"),
		"((C,A),B)": merge("x.stats", "ca1.stats", "b1.stats"),
		"(C,B,A)":   merge("x.stats", "c1.stats", "b1.stats", "a1.stats"),
	} {
		if !bytes.Equal(got, ref1) {
			t.Errorf("phase-1 statistics merged as %s differ from (A,B,C)", name)
		}
	}
	// Phase 2 against the merged basis, merged in several orders.
	for _, s := range []string{"a", "b", "c"} {
		stats("2", s+"2.stats", "m1.stats", s)
	}
	merge("ab2.stats", "a2.stats", "b2.stats")
	merge("bc2.stats", "b2.stats", "c2.stats")
	models := map[string][]byte{}
	merge("x2.stats", "ab2.stats", "c2.stats")
	models["merge((A,B),C)"] = fitStats("m1.json", "x2.stats")
	merge("x2.stats", "a2.stats", "bc2.stats")
	models["merge(A,(B,C))"] = fitStats("m2.json", "x2.stats")
	merge("x2.stats", "c2.stats", "a2.stats", "b2.stats")
	models["merge(C,A,B)"] = fitStats("m3.json", "x2.stats")
	// The statistics of the union (one shard of three files, and one file).
	stats("1", "u1.stats", "", "a", "b", "c")
	stats("2", "u2.stats", "u1.stats", "a", "b", "c")
	models["stats(A∪B∪C) over three files"] = fitStats("u.json", "u2.stats")
	stats("1", "all1.stats", "", "all")
	stats("2", "all2.stats", "all1.stats", "all")
	models["stats(all)"] = fitStats("all.json", "all2.stats")
	// fit on the union.
	mustRun(t, append([]string{"fit", "lda", "--input", p("docword.all.txt"), "--no-timing", "--workers", "3",
		"--em-passes", "0", "--out", p("fit.json")}, common...)...)
	if b := readFile(t, p("fit.json")); len(b) < 100 {
		t.Fatalf("fit wrote %q", b)
	}
	// Ranges of documents of the one file, cut at batch boundaries.
	ranges := []string{"0:750", "750:2000", "2000:"}
	for i, r := range ranges {
		mustRun(t, append([]string{"stats", "--docs", r, "--out", p(fmt.Sprintf("r%d.1.stats", i)), p("docword.all.txt")}, common...)...)
	}
	merge("r1.stats", "r2.1.stats", "r0.1.stats", "r1.1.stats")
	for i, r := range ranges {
		mustRun(t, append([]string{"stats", "--phase", "2", "--basis", p("r1.stats"), "--docs", r, "--out", p(fmt.Sprintf("r%d.2.stats", i)), p("docword.all.txt")}, common...)...)
	}
	merge("r2.stats", "r1.2.stats", "r2.2.stats", "r0.2.stats")
	models["stats --docs of three ranges"] = fitStats("r.json", "r2.stats")
	ref := models["stats(all)"]
	for name, got := range models {
		if !bytes.Equal(got, ref) {
			t.Errorf("model.json from %s differs from stats(all)", name)
		}
	}
	if !bytes.Equal(readFile(t, p("fit.json")), ref) {
		t.Errorf("model.json of fit on the union differs from stats(all): %.3g relative", modelDiff(t, p("fit.json"), p("all.json")))
	}
	// Overlapping ranges of one file are refused.
	mustRun(t, append([]string{"stats", "--docs", "500:1000", "--out", p("o.stats"), p("docword.all.txt")}, common...)...)
	code, _, msg := streamfit(t, "merge", "--out", p("bad.stats"), p("r0.1.stats"), p("o.stats"))
	if code == 0 || !strings.Contains(msg, "share an input") || !strings.Contains(msg, "(documents 500:1000)") {
		t.Errorf("merge of overlapping document ranges: exit %d: %s", code, msg)
	}
}

// TestParseDocRange checks the parsing of --docs (the ranges themselves
// are shard's).
func TestParseDocRange(t *testing.T) {
	for _, bad := range []string{"5", "a:3", "-1:3", "7:7", "9:3"} {
		if _, err := parseDocRange(bad); err == nil {
			t.Errorf("--docs %q accepted", bad)
		}
	}
	if r, err := parseDocRange(":20"); err != nil || *r != [2]int64{0, 20} {
		t.Errorf("--docs :20 gave %v, %v", r, err)
	}
}

// modelDiff returns the largest difference of the topics of the models in
// files a and b relative to their largest entry, or of their α relative to
// each entry, after checking that they cover the same documents.
func modelDiff(t *testing.T, a, b string) float64 {
	t.Helper()
	ma, err := models.Read(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := models.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if ma.K != mb.K || ma.D != mb.D || ma.Fit.Docs != mb.Fit.Docs {
		t.Fatalf("models of %d×%d from %d documents and %d×%d from %d", ma.K, ma.D, ma.Fit.Docs, mb.K, mb.D, mb.Fit.Docs)
	}
	var diff, scale, out float64
	for i := range ma.K {
		for j := range ma.D {
			diff = max(diff, math.Abs(ma.Topics[i][j]-mb.Topics[i][j]))
			scale = max(scale, math.Abs(mb.Topics[i][j]))
		}
		out = max(out, math.Abs(ma.Alpha[i]-mb.Alpha[i])/math.Abs(mb.Alpha[i]))
	}
	return max(out, diff/scale)
}

// shardCorpus writes the corpus of the sharded-statistics tests, 3000
// LDA documents over 120 words (k=4), as docword files of the shards a
// (documents 0–749), b (750–1999), c (2000–2999) and of their union (all),
// docword.NAME.txt in a temporary directory; it returns the path maker.
func shardCorpus(t *testing.T) func(string) string {
	const d, k = 120, 4
	docs := corpusDocs(t, synth.LDAConfig{Docs: 3000, Vocab: d, K: k, Alpha0: 1, DocLen: 50, Seed: 41})
	p := tempPaths(t)
	cuts := map[string][2]int{"a": {0, 750}, "b": {750, 2000}, "c": {2000, 3000}, "all": {0, 3000}}
	for name, cut := range cuts {
		writeDocword(t, p("docword."+name+".txt"), docs, d, cut[0], cut[1])
	}
	return p
}
