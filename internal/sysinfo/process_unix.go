//go:build unix

package sysinfo

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// usage is the process's getrusage, ok false when it failed.
func usage() (ru unix.Rusage, ok bool) {
	return ru, unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil
}

// CPUTime returns the user plus system CPU time the process has used (0
// when unknown): on a shared machine, work per CPU-second is steadier than
// work per wall second.
func CPUTime() time.Duration {
	ru, ok := usage()
	if !ok {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS returns the process's peak resident memory in bytes (getrusage's
// maxrss: kilobytes on Linux and the BSDs, bytes on macOS), or 0 when
// unknown.
func PeakRSS() int64 {
	ru, ok := usage()
	if !ok || ru.Maxrss <= 0 {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
