package sysinfo

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// CPUTime returns the user plus kernel CPU time the process has used (0 when
// unknown).
func CPUTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	ticks := func(t windows.Filetime) int64 { return int64(t.HighDateTime)<<32 | int64(t.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100 // 100 ns ticks
}

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
