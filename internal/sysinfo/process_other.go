//go:build !unix && !windows

package sysinfo

import "time"

// CPUTime returns 0: this platform does not tell.
func CPUTime() time.Duration { return 0 }

// PeakRSS returns 0: this platform does not tell.
func PeakRSS() int64 { return 0 }
