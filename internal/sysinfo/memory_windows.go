package sysinfo

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// memoryStatusEx is the MEMORYSTATUSEX structure of GlobalMemoryStatusEx.
type memoryStatusEx struct {
	Length, MemoryLoad                        uint32
	TotalPhys, AvailPhys                      uint64
	TotalPageFile, AvailPageFile              uint64
	TotalVirtual, AvailVirtual, AvailExtended uint64
}

var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// PhysicalMemory returns the machine's memory in bytes (GlobalMemoryStatusEx),
// or 0 when unknown.
func PhysicalMemory() int64 {
	st := memoryStatusEx{Length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if ok, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&st))); ok == 0 {
		return 0
	}
	return int64(st.TotalPhys)
}
