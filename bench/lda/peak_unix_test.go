//go:build linux || darwin

package lda

import (
	"os"
	"runtime"
	"syscall"
)

// peakKnown says whether peakKB measures anything here.
const peakKnown = true

// peakKB is a finished child's peak resident set size in kB (ru_maxrss,
// which darwin counts in bytes).
func peakKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
