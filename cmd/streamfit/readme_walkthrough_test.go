package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestREADMEWalkthrough runs the commands of README's "Real text, step by
// step" as written, on a small real corpus (the Go files of the Go release's
// own source tree, one document per line), and checks each writes what it
// says: the README's walkthrough must run as a user copies it.
func TestREADMEWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Real text, step by step")
	if !ok {
		t.Fatal(`README has no "Real text, step by step"`)
	}
	_, block, ok := strings.Cut(sec, "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no sh block in the walkthrough")
	}
	dir := t.TempDir()
	writeGoCorpus(t, dir, 600)
	t.Chdir(dir)
	ran := 0
	for line := range strings.SplitSeq(block, "\n") {
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args := strings.Fields(line)
		if args[0] != "streamfit" {
			t.Fatalf("README walkthrough runs %q, not streamfit", line)
		}
		args = args[1:]
		redirect := ""
		if n := len(args); n >= 2 && args[n-2] == ">" {
			redirect, args = args[n-1], args[:n-2]
		}
		code, out, msg := streamfit(t, args...)
		if code != 0 {
			t.Fatalf("README: %s: exit %d\n%s", line, code, msg)
		}
		if redirect != "" {
			if err := os.WriteFile(redirect, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ran++
	}
	if ran < 8 {
		t.Fatalf("ran %d commands of the walkthrough", ran)
	}
	for _, f := range []string{"vocab.txt", "train.parquet", "test.parquet", "model.json", "theta.parquet", "heldout.json", "coherence.json", "report.html"} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("the walkthrough did not write %s: %v", f, err)
		}
	}
}

// writeGoCorpus writes train.txt and test.txt in dir: the first n .go files
// of the Go release's source tree, a file per line, every 10th in test.txt.
func writeGoCorpus(t *testing.T, dir string, n int) {
	t.Helper()
	var train, test strings.Builder
	i := 0
	root := filepath.Join(runtime.GOROOT(), "src")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || i >= n {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc := strings.Join(strings.Fields(string(b)), " ")
		if i%10 == 9 {
			test.WriteString(doc + "\n")
		} else {
			train.WriteString(doc + "\n")
		}
		i++
		return nil
	})
	if err != nil && i < n {
		t.Skipf("the Go source tree at %s: %v", root, err)
	}
	if i < n {
		t.Skipf("only %d Go files under %s", i, root)
	}
	for name, s := range map[string]string{"train.txt": train.String(), "test.txt": test.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
