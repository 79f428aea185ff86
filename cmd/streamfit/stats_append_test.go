package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream/synth"
)

// TestStatsAppend runs the nightly steps: phase-1 and phase-2 statistics
// grow by --append, one new file a night; the phase-2 append checks the
// basis drift against the updated phase 1 and, beyond --drift-tol, refuses
// with the command that recomputes phase 2. The appended statistics fit to
// the same model.json as phase 2 computed at once over all the files with
// the same basis. Inputs already covered are refused, by --append and by
// merge.
func TestStatsAppend(t *testing.T) {
	const d = 120
	docs := corpusDocs(t, synth.LDAConfig{Docs: 3000, Vocab: d, K: 4, Alpha0: 1, DocLen: 50, Seed: 61})
	p := tempPaths(t)
	for i, day := range []string{"a", "b", "c"} {
		writeDocword(t, p("docword."+day+".txt"), docs, d, 1000*i, 1000*(i+1))
	}
	in := func(day string) string { return p("docword." + day + ".txt") }
	flags := []string{"--batch-rows", "250", "--progress", "off"}
	run := func(args ...string) { t.Helper(); mustRun(t, append(args, flags...)...) }
	var out bytes.Buffer
	alsoStderr = &out
	defer func() { alsoStderr = nil }()

	run("stats", "--k", "4", "--seed", "3", "--out", p("run1.stats"), in("a"))
	run("stats", "--append", p("run1.stats"), in("b"))
	run("stats", "--phase", "2", "--basis", p("run1.stats"), "--out", p("run2.stats"), in("a"), in("b"))
	// The reference: phase 2 over the three files at once with the same basis.
	run("stats", "--phase", "2", "--basis", p("run2.stats"), "--out", p("ref2.stats"), in("a"), in("b"), in("c"))

	// Night 3.
	run("stats", "--append", p("run1.stats"), in("c"))
	out.Reset()
	code, _, msg := streamfit(t, append([]string{"stats", "--append", p("run2.stats"), "--basis", p("run1.stats"), "--drift-tol", "1e-12", in("c")}, flags...)...)
	want := "streamfit stats --phase 2 --basis " + p("run1.stats") + " --out " + p("run2.stats") + " " + in("a") + " " + in("b") + " " + in("c")
	if code != 1 || !strings.Contains(msg, "basis drift") || !strings.Contains(msg, want) {
		t.Errorf("append beyond the drift tolerance: exit %d: %s\nwant the command %s", code, msg, want)
	}
	run("stats", "--append", p("run2.stats"), "--basis", p("run1.stats"), "--drift-tol", "1", in("c"))
	if !strings.Contains(out.String(), "appending with the basis of") {
		t.Errorf("append within the drift tolerance: %s", out.String())
	}
	mustRun(t, "fit", "lda", "--from-stats", p("run2.stats"), "--no-timing", "--out", p("appended.json"))
	mustRun(t, "fit", "lda", "--from-stats", p("ref2.stats"), "--no-timing", "--out", p("ref.json"))
	if !bytes.Equal(readFile(t, p("appended.json")), readFile(t, p("ref.json"))) {
		t.Error("statistics appended night by night fit to another model than phase 2 at once")
	}

	// Inputs covered twice are refused, naming both.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--append", p("run1.stats"), in("b")}, "already covers it"},
		{[]string{"merge", "--out", p("x.stats"), p("run1.stats"), p("run1.stats")}, "share an input"},
		{[]string{"stats", "--out", p("x.stats"), in("a"), in("a")}, "share an input"},
		{[]string{"stats", "--append", p("run2.stats"), "--k", "5", in("c")}, "--k=5 differs from " + p("run2.stats")},
	} {
		code, _, msg := streamfit(t, c.args...)
		if code == 0 || !strings.Contains(msg, c.want) {
			t.Errorf("streamfit %s: exit %d: %q, want %q", strings.Join(c.args, " "), code, msg, c.want)
		}
	}
	if _, err := os.Stat(p("x.stats")); !os.IsNotExist(err) {
		t.Error("a refused command left its output")
	}
}

// TestQuoteArg checks that the commands stats prints (the power pass, the
// recomputation of phase 2) survive a POSIX shell: every argument comes back
// as it was, and plain ones are left unquoted.
func TestQuoteArg(t *testing.T) {
	for _, s := range []string{"plain/path-1.stats", "", "a b", "it's", `$HOME "x" \n`, "tab\there", "*.stats"} {
		got, err := exec.Command("sh", "-c", "printf %s "+quoteArg(s)).Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		if string(got) != s {
			t.Errorf("quoteArg(%q) = %s: the shell reads %q", s, quoteArg(s), got)
		}
	}
	if q := quoteArg("plain/path-1.stats"); q != "plain/path-1.stats" {
		t.Errorf("a plain argument was quoted: %s", q)
	}
}
