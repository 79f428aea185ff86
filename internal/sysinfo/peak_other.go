//go:build !unix && !windows

package sysinfo

// PeakRSS returns 0: this platform does not tell.
func PeakRSS() int64 { return 0 }
