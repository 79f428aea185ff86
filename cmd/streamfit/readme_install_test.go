package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The commands of the README's "On a fresh machine" run as written from
// the clone: go install puts a working streamfit where the README says
// (GOBIN, here a temporary directory), and the demo runs, on a small
// corpus in place of the Go source tree. The last line (the test suite)
// is the suite running this test.
func TestREADMEFreshMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## On a fresh machine")
	_, block, ok2 := strings.Cut(sec, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`README has no sh block under "On a fresh machine"`)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gobin := filepath.Join(dir, "bin")
	writeGoCorpus(t, dir, 400)
	bin := filepath.Join(gobin, "streamfit")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	installed, demoed := false, false
	for line := range strings.SplitSeq(block, "\n") {
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case line == "go install ./cmd/streamfit":
			cmd := exec.Command("go", "install", "./cmd/streamfit")
			cmd.Dir, cmd.Env = root, append(os.Environ(), "GOBIN="+gobin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("README: %s: %v\n%s", line, err, out)
			}
			if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil {
				t.Fatalf("the installed %s: %v\n%s", bin, err, out)
			}
			installed = true
		case strings.HasPrefix(line, "go run ./cmd/streamfit demo "):
			if !installed {
				t.Fatal("README runs the demo before installing the command")
			}
			rest := strings.TrimPrefix(line, "go run ./cmd/streamfit ")
			if !strings.Contains(rest, `"$(go env GOROOT)/src"`) {
				t.Fatalf("README's demo reads %q, not the Go source tree", rest)
			}
			args := strings.Fields(strings.ReplaceAll(rest, `"$(go env GOROOT)/src"`, "CORPUS"))
			for i, a := range args {
				if a == "CORPUS" {
					args[i] = filepath.Join(dir, "train.txt")
				}
			}
			cmd := exec.Command(bin, append(args, "--dir", filepath.Join(dir, "demo"))...)
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "held-out perplexity") {
				t.Fatalf("README: %s: %v\n%s", line, err, out)
			}
			demoed = true
		case strings.HasPrefix(line, "go vet ./... && go test ./..."):
		default:
			t.Fatalf("README's fresh-machine block runs %q, which this test does not know", line)
		}
	}
	if !installed || !demoed {
		t.Fatalf("README's fresh-machine block: install %v, demo %v", installed, demoed)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo", "report.html")); err != nil {
		t.Errorf("the demo wrote no report: %v", err)
	}
}
