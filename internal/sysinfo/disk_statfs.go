//go:build linux || darwin || freebsd || dragonfly

package sysinfo

import (
	"os"

	"golang.org/x/sys/unix"
)

// DiskFree returns the bytes available to an unprivileged user on the file
// system holding dir ("" = os.TempDir()), or 0 when unknown.
func DiskFree(dir string) int64 {
	if dir == "" {
		dir = os.TempDir()
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
