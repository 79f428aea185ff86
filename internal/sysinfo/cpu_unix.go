//go:build unix

package sysinfo

import (
	"time"

	"golang.org/x/sys/unix"
)

// CPUTime returns the user plus system CPU time the process has used (0
// when unknown): on a shared machine, work per CPU-second is steadier than
// work per wall second.
func CPUTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
