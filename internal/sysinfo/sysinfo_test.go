package sysinfo

import (
	"runtime"
	"testing"
	"time"
)

// On the platforms the project builds for, every answer is known and sane.
func TestKnown(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "windows", "freebsd":
	default:
		t.Skip("no answers promised on " + runtime.GOOS)
	}
	if m := PhysicalMemory(); m < 64<<20 || m > 1<<50 {
		t.Errorf("physical memory %d bytes", m)
	}
	if d := DiskFree(t.TempDir()); d <= 0 {
		t.Errorf("free disk %d bytes", d)
	}
	// 64 MiB touched page by page raise the peak resident memory past it.
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	if p := PeakRSS(); p < int64(len(buf)) || p > 1<<50 {
		t.Errorf("peak resident memory %d bytes after touching %d", p, len(buf))
	}
	before := CPUTime()
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	if after := CPUTime(); after <= before || after-before > time.Minute {
		t.Errorf("CPU time went from %v to %v over 50 ms of spinning", before, after)
	}
}
