//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package sysinfo

// PhysicalMemory returns 0: this platform does not tell.
func PhysicalMemory() int64 { return 0 }
