//go:build unix

package sysinfo

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// PeakRSS returns the process's peak resident memory in bytes (getrusage's
// maxrss: kilobytes on Linux and the BSDs, bytes on macOS), or 0 when
// unknown.
func PeakRSS() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil || ru.Maxrss <= 0 {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
