//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Outputs that are special files are never replaced: a character device or a
// FIFO is written into, a symbolic link is followed (the file it points to is
// replaced, the link stays), a socket is refused.
func TestOutputSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	gen := func(truth string) (int, string) {
		code, _, msg := streamfit(t, "gen", "lda", "--docs", "100", "--vocab", "300", "--k", "5", "--doc-len", "20",
			"--out", p("c.parquet"), "--truth", truth)
		os.Remove(p("c.parquet"))
		return code, msg
	}

	t.Run("character device", func(t *testing.T) {
		// A private copy of /dev/null where the test may create one (root);
		// else /dev/null itself, which only root could have destroyed.
		null := p("null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
			null = os.DevNull
		}
		if code, msg := gen(null); code != 0 {
			t.Fatalf("--truth %s: exit %d, %s", null, code, msg)
		}
		if st, err := os.Lstat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v, %v", null, st.Mode(), err)
		}
	})

	t.Run("fifo", func(t *testing.T) {
		fifo := p("fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip(err)
		}
		got := make(chan []byte)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		code, msg := gen(fifo)
		var b []byte
		select {
		case b = <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("nothing was written into the FIFO (exit %d, %s)", code, msg)
		}
		if code != 0 || !strings.Contains(string(b), `"topics"`) {
			t.Fatalf("--truth FIFO: exit %d, %s; read %d bytes", code, msg, len(b))
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced: %v, %v", st.Mode(), err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		if err := os.Mkdir(p("real"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p("real/t.json"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real/t.json", p("link.json")); err != nil {
			t.Fatal(err)
		}
		if code, msg := gen(p("link.json")); code != 0 {
			t.Fatalf("exit %d, %s", code, msg)
		}
		if st, err := os.Lstat(p("link.json")); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v, %v", st.Mode(), err)
		}
		if b, _ := os.ReadFile(p("real/t.json")); !strings.Contains(string(b), `"topics"`) {
			t.Fatalf("the link's target was not written: %q", b)
		}
		// A dangling link creates its target.
		if err := os.Symlink("real/new.json", p("dangling.json")); err != nil {
			t.Fatal(err)
		}
		if code, msg := gen(p("dangling.json")); code != 0 {
			t.Fatalf("dangling link: exit %d, %s", code, msg)
		}
		if b, _ := os.ReadFile(p("real/new.json")); !strings.Contains(string(b), `"topics"`) {
			t.Fatalf("the dangling link's target was not written")
		}
	})

	t.Run("socket", func(t *testing.T) {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Skip(err)
		}
		defer syscall.Close(fd)
		sock := p("s.sock")
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			t.Skip(err)
		}
		code, msg := gen(sock)
		if code != 1 || !strings.Contains(msg, "not a regular file") {
			t.Fatalf("--truth socket: exit %d, %s", code, msg)
		}
		if st, err := os.Lstat(sock); err != nil || st.Mode()&os.ModeSocket == 0 {
			t.Fatalf("the socket was replaced")
		}
	})
}

// mkdev is the device number of major:minor as Linux encodes it.
func mkdev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
}

// A checkpoint directory is locked by the fit using it: a second fit given
// the same --checkpoint is refused at once, naming who holds the lock,
// instead of failing on files the first one removed.
func TestCheckpointLocked(t *testing.T) {
	dir := t.TempDir()
	c := smallCorpus(t, dir, "c.parquet")
	ck := filepath.Join(dir, "ck")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(ck, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	lock.WriteString("pid 4242 on testhost since 2026-01-01T00:00:00Z\n")
	for _, model := range []string{"lda", "topic"} {
		code, _, msg := streamfit(t, "fit", model, "--input", c, "--k", "5", "--checkpoint", ck, "--out", filepath.Join(dir, "m.json"))
		if code != 1 || !strings.Contains(msg, "in use by another fit") || !strings.Contains(msg, "pid 4242 on testhost") {
			t.Errorf("fit %s with a locked checkpoint directory: exit %d, %q", model, code, strings.TrimSpace(msg))
		}
	}
	// Once the holder ends, the directory is free.
	lock.Close()
	mustRun(t, "fit", "lda", "--input", c, "--k", "5", "--checkpoint", ck, "--out", filepath.Join(dir, "m.json"))
}
