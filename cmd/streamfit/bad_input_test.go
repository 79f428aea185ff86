package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallCorpus generates a small LDA corpus (200 documents, 300 words, k=5) in
// dir and returns its path.
func smallCorpus(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	mustRun(t, "gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--doc-len", "50", "--out", path, "--progress", "off")
	return path
}

// An output that is one of the inputs is refused before any work (exit 2),
// whatever name reaches it (the same name, ./name, a hard link), and the
// input is left as it was.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Link(c, p("hard.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("good.txt"), []byte(strings.Repeat("alpha beta gamma delta\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input string
		args  []string
	}{
		{"fit out=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", c}},
		{"fit out=hard link of input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("hard.parquet")}},
		{"fit topics-parquet=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--topics-parquet", c}},
		{"fit cpuprofile=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--cpuprofile", c}},
		{"stats out=input", c, []string{"stats", "--phase", "1", "--k", "5", "--out", c, c}},
		{"convert out=input", c, []string{"convert", c, p("./c.parquet")}},
		{"vocab build out=input", p("good.txt"), []string{"vocab", "build", "--min-count", "1", "--out", p("good.txt"), p("good.txt")}},
		{"merge out=input", c, []string{"merge", "--out", c, c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := readFile(t, tc.input)
			code, _, msg := streamfit(t, tc.args...)
			if code != 2 || !strings.Contains(msg, "is the input") {
				t.Errorf("exit %d, %q; want exit 2 naming the input", code, strings.TrimSpace(msg))
			}
			if !bytes.Equal(readFile(t, tc.input), before) {
				t.Errorf("the input %s was changed", tc.input)
			}
			if _, err := os.Stat(p("m.json")); err == nil {
				t.Errorf("an output was written")
			}
		})
	}
}

// Two outputs on one path are refused before any work (exit 2): neither is
// silently lost, nothing is written.
func TestTwoOutputsOnePath(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Symlink("o.json", p("alias.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gen out=truth", []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("same.parquet"), "--truth", p("same.parquet")}},
		{"gen dense out=truth", []string{"gen", "gmm", "--rows", "100", "--d", "4", "--k", "2", "--out", p("same.parquet"), "--truth", p("./same.parquet")}},
		{"fit out=topics-parquet", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--topics-parquet", p("o.json")}},
		{"fit out=symlink to topics-parquet", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--topics-parquet", p("alias.json")}},
		{"fit out=cpuprofile", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--cpuprofile", p("o.json")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, msg := streamfit(t, tc.args...)
			if code != 2 || !strings.Contains(msg, "two outputs are one file") {
				t.Errorf("exit %d, %q; want exit 2", code, strings.TrimSpace(msg))
			}
			for _, n := range []string{"same.parquet", "o.json"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}

// Every output is checked before the first pass: a missing directory or an
// existing directory fails at once (no plan printed, no pass run) with a
// message naming the output.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Mkdir(p("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"fit out in missing dir", "no such file or directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("nodir/x.json")}},
		{"fit out is a directory", "is a directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("d")}},
		{"fit topics-parquet in missing dir", "no such file or directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--topics-parquet", p("nodir/t.parquet")}},
		{"fit gmm out is a directory", "is a directory", []string{"fit", "gmm", "--input", c, "--k", "2", "--out", p("d")}},
		{"stats out in missing dir", "no such file or directory", []string{"stats", "--phase", "1", "--k", "5", "--out", p("nodir/s.stats"), c}},
		{"gen out is a directory", "is a directory", []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("d")}},
		{"gen dense truth in missing dir", "no such file or directory", []string{"gen", "gmm", "--rows", "100", "--d", "4", "--k", "2", "--out", p("g.parquet"), "--truth", p("nodir/t.json")}},
		{"convert out is a directory", "is a directory", []string{"convert", c, p("d")}},
		{"merge out in missing dir", "no such file or directory", []string{"merge", "--out", p("nodir/a.stats"), c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, msg := streamfit(t, tc.args...)
			if code != 1 || !strings.Contains(msg, tc.want) || strings.Contains(msg, "file exists") {
				t.Errorf("exit %d, %q; want exit 1 with %q", code, strings.TrimSpace(msg), tc.want)
			}
			if strings.Contains(msg, "plan") || strings.Contains(msg, "pass") {
				t.Errorf("work began before the output was checked: %q", msg)
			}
			for _, n := range []string{"m.json", "g.parquet"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}
