package main

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream/synth"
)

// TestStatsRefusals checks that merge and fit --from-stats refuse damaged
// statistics files (a flipped bit, an older version) and merges of
// statistics of different fits (model, seed, vocabulary size, whitening
// basis), naming the file and what differs, and leave no output file.
func TestStatsRefusals(t *testing.T) {
	docs := corpusDocs(t, synth.LDAConfig{Docs: 600, Vocab: 100, K: 3, Alpha0: 1, DocLen: 30, Seed: 3})
	p := tempPaths(t)
	writeDocword(t, p("docword.a.txt"), docs, 100, 0, 300)
	writeDocword(t, p("docword.b.txt"), docs, 100, 300, 600)
	writeDocword(t, p("docword.w.txt"), docs, 120, 0, 300) // 120 words
	stats := func(out, input string, extra ...string) {
		t.Helper()
		mustRun(t, append([]string{"stats", "--k", "3", "--progress", "off", "--out", p(out), p(input)}, extra...)...)
	}
	topic := func(out, input string) {
		t.Helper()
		mustRun(t, "stats", "topic", "--k", "3", "--progress", "off", "--out", p(out), p(input))
	}
	stats("a.stats", "docword.a.txt")
	stats("b.stats", "docword.b.txt")
	topic("topic.stats", "docword.b.txt")
	stats("seed.stats", "docword.b.txt", "--seed", "7")
	stats("wide.stats", "docword.w.txt")
	stats("a2.stats", "docword.a.txt", "--phase", "2", "--basis", p("a.stats"))
	stats("b2.stats", "docword.b.txt", "--phase", "2", "--basis", p("b.stats"))

	good := readFile(t, p("b.stats"))
	flip := append([]byte(nil), good...)
	flip[len(flip)-9] ^= 0x10
	os.WriteFile(p("flip.stats"), flip, 0o644)
	old := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(old[8:], 2)
	os.WriteFile(p("old.stats"), old, 0o644)
	os.WriteFile(p("text.stats"), []byte("docword\n"), 0o644)

	for _, c := range []struct {
		file string
		want []string
	}{
		{"flip.stats", []string{p("flip.stats"), "checksum mismatch"}},
		{"old.stats", []string{p("old.stats"), "version 2, expected 3"}},
		{"text.stats", []string{p("text.stats"), "not a streamfit statistics file"}},
		{"topic.stats", []string{"model is topic in " + p("topic.stats") + " but lda in " + p("a.stats")}},
		{"seed.stats", []string{"seed is 7 in " + p("seed.stats")}},
		{"wide.stats", []string{"d (vocabulary size) is 120 in " + p("wide.stats")}},
		{"a2.stats", []string{"phase is 2"}},
	} {
		code, _, msg := streamfit(t, "merge", "--out", p("out.stats"), p("a.stats"), p(c.file))
		if code == 0 {
			t.Errorf("merge with %s succeeded", c.file)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("merge with %s: %q lacks %q", c.file, strings.TrimSpace(msg), w)
			}
		}
		if _, err := os.Stat(p("out.stats")); !os.IsNotExist(err) {
			t.Fatalf("a refused merge with %s left its output", c.file)
		}
	}
	// Phase-2 statistics of different bases.
	if code, _, msg := streamfit(t, "merge", "--out", p("out.stats"), p("a2.stats"), p("b2.stats")); code == 0 || !strings.Contains(msg, "basis") {
		t.Errorf("merge of phase 2 of different bases: exit %d, %q", code, msg)
	}
	// A fit from a damaged file names it.
	if code, _, msg := streamfit(t, "fit", "lda", "--from-stats", p("flip.stats"), "--out", p("m.json")); code == 0 || !strings.Contains(msg, p("flip.stats")) {
		t.Errorf("fit from a damaged file: exit %d, %q", code, msg)
	}
	if _, err := os.Stat(p("m.json")); !os.IsNotExist(err) {
		t.Error("a refused fit left its model file")
	}
}
