//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package sysinfo

import "golang.org/x/sys/unix"

// PhysicalMemory returns the machine's memory in bytes (the hw.memsize or
// hw.physmem sysctl), or 0 when unknown.
func PhysicalMemory() int64 {
	for _, name := range []string{"hw.memsize", "hw.physmem64", "hw.physmem"} {
		if n, err := unix.SysctlUint64(name); err == nil && n > 0 {
			return int64(n)
		}
	}
	return 0
}
