//go:build unix

package stream

import "golang.org/x/sys/unix"

// writableByUs reports whether the process may write the file at path
// (access(2): its owner, group and mode, as for the process's user; root
// may write any).
func writableByUs(path string) bool { return unix.Access(path, unix.W_OK) == nil }
