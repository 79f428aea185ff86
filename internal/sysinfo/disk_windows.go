package sysinfo

import (
	"os"

	"golang.org/x/sys/windows"
)

// DiskFree returns the bytes available to the user on the volume holding dir
// ("" = os.TempDir()), or 0 when unknown.
func DiskFree(dir string) int64 {
	if dir == "" {
		dir = os.TempDir()
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0
	}
	return int64(avail)
}
