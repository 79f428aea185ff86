//go:build unix

package lda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockCheckpoints takes the lock of a checkpoint directory for one fit: two
// fits sharing a directory would remove and overwrite each other's files. The
// lock is an flock on dir/LOCK, which the kernel releases when the process
// ends, even by kill -9, so a resumed fit never finds a stale lock. The file
// says who holds it.
func lockCheckpoints(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("checkpoint directory %s is in use by another fit (%s); wait for it to end or give another directory", dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("checkpoint: locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	return func() { f.Close() }, nil
}
