package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spillLeft fails the test if dir holds a file.
func spillLeft(t *testing.T, what, dir string) {
	t.Helper()
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("%s left %s in the spill directory", what, es[0].Name())
	}
}

// `fit lda` writes the same model.json with the spill off, on and auto (a
// docword input spills), the default fit and the pure spectral one; the
// spill is in use (progress says so) and its file is gone afterwards. A
// spill directory that does not exist is a warning, not an error.
func TestFitSpillSameModel(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "1500", "--vocab", "300", "--k", "3", "--doc-len", "40", "--seed", "3",
		"--out", p("docword.c.txt"), "--truth", p("truth.json"), "--progress", "off")
	spillDir := p("spill")
	if err := os.Mkdir(spillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, em := range []string{"0", "3"} {
		fit := func(out string, extra ...string) ([]byte, string) {
			t.Helper()
			args := append([]string{"fit", "lda", "--input", p("docword.c.txt"), "--k", "3", "--em-passes", em, "--batch-rows", "200",
				"--no-timing", "--out", p(out)}, extra...)
			var stderr bytes.Buffer
			code := run(context.Background(), args, &stderr)
			errs := stderr.String()
			if code != 0 {
				t.Fatalf("fit %s: exit %d: %s", strings.Join(extra, " "), code, errs)
			}
			b, err := os.ReadFile(p(out))
			if err != nil {
				t.Fatal(err)
			}
			return b, errs
		}
		ref, _ := fit("off.json", "--spill", "off", "--progress", "off")
		for _, mode := range []string{"on", "auto"} {
			got, errs := fit(mode+".json", "--spill", mode, "--spill-dir", spillDir, "--progress", "on")
			if !bytes.Equal(got, ref) {
				t.Errorf("--em-passes %s --spill %s: model.json differs from --spill off", em, mode)
			}
			if !strings.Contains(errs, "spilled to "+spillDir) {
				t.Errorf("--spill %s: progress does not mention the spill: %q", mode, errs)
			}
			spillLeft(t, "fit --spill "+mode, spillDir)
		}
		got, errs := fit("missing.json", "--spill", "on", "--spill-dir", p("missing"), "--progress", "off")
		if !bytes.Equal(got, ref) || strings.Count(errs, "warning: cannot write the spill file") != 1 {
			t.Errorf("--spill-dir missing: same model %v, stderr %q; want the same model and one warning", bytes.Equal(got, ref), errs)
		}
	}
}

// The spill file is removed when the fit fails: on a damaged input found
// during the first pass, and when the fit is cancelled (as by SIGINT or
// SIGTERM, which cancel run's context).
func TestFitSpillRemovedOnError(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "20000", "--vocab", "400", "--k", "4", "--doc-len", "60", "--seed", "8",
		"--out", p("docword.c.txt"), "--truth", p("truth.json"), "--progress", "off")
	body, err := os.ReadFile(p("docword.c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("docword.bad.txt"), append(body, "20000 1 x\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	spillDir := p("spill")
	if err := os.Mkdir(spillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := func(input string) []string {
		return []string{"fit", "lda", "--input", p(input), "--k", "4", "--spill", "on", "--spill-dir", spillDir,
			"--batch-rows", "100", "--progress", "off", "--out", p("out.json")}
	}
	if code, _, errs := streamfit(t, args("docword.bad.txt")...); code != 1 || !strings.Contains(errs, "docword.bad.txt") {
		t.Errorf("damaged input: exit %d, %q", code, errs)
	}
	spillLeft(t, "a fit of a damaged input", spillDir)

	// Cancel as soon as the spill file is open. Its name is removed as soon
	// as it is made, so look for it among the process's open files.
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to see the spill file by")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan bool, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if spillOpen(spillDir) {
				seen <- true
				return
			}
		}
		seen <- false
	}()
	var errb bytes.Buffer
	code := run(ctx, args("docword.c.txt"), &errb)
	if !<-seen {
		t.Fatal("no spill file was opened")
	}
	if code != 1 || !strings.Contains(errb.String(), "canceled") {
		t.Errorf("cancelled fit: exit %d, %q", code, errb.String())
	}
	spillLeft(t, "a cancelled fit", spillDir)
	if spillOpen(spillDir) {
		t.Error("the cancelled fit left the spill file open")
	}
	if _, err := os.Stat(p("out.json")); err == nil {
		t.Error("a cancelled fit wrote out.json")
	}
}

// spillOpen reports whether this process has a spill file of dir open
// (Linux: by /proc/self/fd), or one is in dir by name.
func spillOpen(dir string) bool {
	if es, _ := os.ReadDir(dir); len(es) > 0 {
		return true
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, filepath.Join(dir, "streamfit-spill-")) {
			return true
		}
	}
	return false
}
