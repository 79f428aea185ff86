//go:build !linux && !darwin && !freebsd && !dragonfly && !windows

package sysinfo

// DiskFree returns 0: this platform's free space is not queried.
func DiskFree(dir string) int64 { return 0 }
