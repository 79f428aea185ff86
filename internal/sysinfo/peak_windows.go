package sysinfo

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// processMemoryCounters is the PROCESS_MEMORY_COUNTERS structure of
// GetProcessMemoryInfo.
type processMemoryCounters struct {
	CB, PageFaultCount                                 uint32
	PeakWorkingSetSize, WorkingSetSize                 uintptr
	QuotaPeakPagedPoolUsage, QuotaPagedPoolUsage       uintptr
	QuotaPeakNonPagedPoolUsage, QuotaNonPagedPoolUsage uintptr
	PagefileUsage, PeakPagefileUsage                   uintptr
}

var getProcessMemoryInfo = windows.NewLazySystemDLL("kernel32.dll").NewProc("K32GetProcessMemoryInfo")

// PeakRSS returns the process's peak working set in bytes
// (GetProcessMemoryInfo), or 0 when unknown.
func PeakRSS() int64 {
	c := processMemoryCounters{CB: uint32(unsafe.Sizeof(processMemoryCounters{}))}
	if ok, _, _ := getProcessMemoryInfo.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&c)), uintptr(c.CB)); ok == 0 {
		return 0
	}
	return int64(c.PeakWorkingSetSize)
}
