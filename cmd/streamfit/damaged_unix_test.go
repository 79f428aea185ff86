//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe as the input (with a writer attached it read as "file is
// empty") is refused for what it is, before it is opened: inputs are read
// more than once.
func TestFIFOInput(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "docword.fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	code, msg, _ := cli(t, "fit", "lda", "--input", fifo, "--k", "2", "--out", filepath.Join(t.TempDir(), "m.json"), "--progress", "off")
	if code != 1 || !strings.Contains(msg, fifo) || !strings.Contains(msg, "named pipe") {
		t.Fatalf("exit %d, %q; want exit 1 saying it is a named pipe", code, strings.TrimSpace(msg))
	}
}
