package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointHelper is not a test: TestCheckpointKill runs the test
// binary with STREAMFIT_HELPER_ARGS set, and this function then acts as the
// streamfit command (arguments separated by newlines), in a process that
// can be killed.
func TestCheckpointHelper(t *testing.T) {
	args := os.Getenv("STREAMFIT_HELPER_ARGS")
	if args == "" {
		return
	}
	os.Exit(run(context.Background(), strings.Split(args, "\n"), os.Stderr))
}

// checkpointCorpus generates, in a temporary directory, the corpus
// docword.c.txt that the checkpoint tests fit (long enough for a pass to be
// killed midway) and returns the function that names a file of that
// directory.
func checkpointCorpus(t *testing.T) func(string) string {
	t.Helper()
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "20000", "--vocab", "400", "--k", "4", "--doc-len", "60", "--seed", "8",
		"--out", p("docword.c.txt"), "--truth", p("truth.json"), "--progress", "off")
	return p
}

// TestCheckpointKill runs `fit lda --checkpoint` in a subprocess, kills it
// (SIGKILL) during the second pass, runs the same command again and checks
// that it resumed and wrote the model.json of an uninterrupted fit, byte for
// byte (--no-timing), and that the killed run left no model file.
func TestCheckpointKill(t *testing.T) {
	p := checkpointCorpus(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"fit", "lda", "--input", p("docword.c.txt"), "--k", "4", "--alpha0", "1", "--seed", "2",
			"--plan", "explicit", "--batch-rows", "100", "--workers", "2", "--no-timing", "--progress", "off", "--out", p(out)}, extra...)
	}
	mustRun(t, args("ref.json")...)
	ref, err := os.ReadFile(p("ref.json"))
	if err != nil {
		t.Fatal(err)
	}

	ck := []string{"--checkpoint", p("ck"), "--checkpoint-every", "0"}
	killWhen(t, args("killed.json", ck...), filepath.Join(p("ck"), "pass-2.partial.stats"))
	if _, err := os.Stat(filepath.Join(p("ck"), "pass-2.stats")); err == nil {
		t.Fatal("pass 2 ended before the kill; the test did not interrupt it")
	}
	if _, err := os.Stat(p("killed.json")); !os.IsNotExist(err) {
		t.Errorf("the killed fit left %s", p("killed.json"))
	}
	resumeSame(t, args("resumed.json", ck...), p("resumed.json"), "pass-2.partial.stats", ref)
	// Another input under the same checkpoint directory is refused.
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "400", "--k", "4", "--doc-len", "60", "--seed", "9",
		"--out", p("docword.d.txt"), "--truth", p("truth.json"), "--progress", "off")
	a := args("other.json", ck...)
	a[3] = p("docword.d.txt")
	code, _, msg := streamfit(t, a...)
	if code == 0 || !strings.Contains(msg, "another fit") {
		t.Errorf("checkpoint of another input: exit %d: %s", code, msg)
	}
}

// TestCheckpointKillEM kills `fit lda --checkpoint` (SIGKILL) within an EM
// pass, once the pass's statistics so far were saved (batch EM) or once
// the first pass was saved (online EM, which saves only whole passes),
// runs the same command again and checks that it resumed from them and
// wrote the model.json of an uninterrupted fit, byte for byte.
func TestCheckpointKillEM(t *testing.T) {
	for _, c := range []struct {
		name, file string
		extra      []string
	}{
		{"batch", "em.partial", nil},
		{"online", "em.ckpt", []string{"--em", "online", "--em-minibatch", "200"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := checkpointCorpus(t)
			args := func(out string, extra ...string) []string {
				a := append([]string{"fit", "lda", "--input", p("docword.c.txt"), "--k", "4", "--alpha0", "1", "--seed", "2",
					"--plan", "explicit", "--workers", "2", "--no-timing", "--progress", "off",
					"--em-passes", "8", "--em-tol", "1e-12", "--out", p(out)}, c.extra...)
				return append(a, extra...)
			}
			mustRun(t, args("ref.json")...)
			ref, err := os.ReadFile(p("ref.json"))
			if err != nil {
				t.Fatal(err)
			}
			ck := []string{"--checkpoint", p("ck"), "--checkpoint-every", "0"}
			killWhen(t, args("killed.json", ck...), filepath.Join(p("ck"), c.file))
			if _, err := os.Stat(p("killed.json")); !os.IsNotExist(err) {
				t.Fatal("the fit ended before the kill; the test did not interrupt it")
			}
			resumeSame(t, args("resumed.json", ck...), p("resumed.json"), c.file, ref)
		})
	}
}

// killWhen runs streamfit with args in a subprocess (TestCheckpointHelper)
// and kills it (SIGKILL) as soon as the file path exists.
func killWhen(t *testing.T, args []string, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCheckpointHelper$")
	cmd.Env = append(os.Environ(), "STREAMFIT_HELPER_ARGS="+strings.Join(args, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no %s after 2 minutes: %s", filepath.Base(path), stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// resumeSame runs the fit of args again, checks that it said it resumed from
// the checkpoint file named from, and that it wrote out, byte for byte ref.
func resumeSame(t *testing.T, args []string, out, from string, ref []byte) {
	t.Helper()
	var said bytes.Buffer
	alsoStderr = &said
	defer func() { alsoStderr = nil }()
	mustRun(t, args...)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said.String(), from) {
		t.Errorf("the second run did not resume from %s: %s", from, said.String())
	}
	if !bytes.Equal(got, ref) {
		t.Error("model.json of the resumed fit differs from the uninterrupted one")
	}
}
