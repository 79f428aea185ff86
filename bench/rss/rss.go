// Package rss measures the peak resident set size of the current process, for
// the benchmarks and memory tests that check memory does not grow with the
// number of rows. It reads Linux's /proc/self/status; elsewhere it reports
// ErrUnsupported.
package rss

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// ErrUnsupported is returned where /proc is not available.
var ErrUnsupported = errors.New("rss: peak RSS needs Linux /proc")

// Peak returns the process's peak resident set size (VmHWM) in bytes.
func Peak() (int64, error) { return field("VmHWM:") }

// Anon returns the process's anonymous resident memory (RssAnon) in bytes: heap,
// stacks and runtime memory, without file pages mapped from inputs (which the
// kernel can drop at any time and which VmHWM counts).
func Anon() (int64, error) { return field("RssAnon:") }

// Current returns the process's resident set size (VmRSS) in bytes.
func Current() (int64, error) { return field("VmRSS:") }

// Reset returns freed memory to the OS and resets the peak to the current RSS,
// so the next Peak covers only what runs after it.
func Reset() error {
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets VmHWM (Linux ≥ 4.0).
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func field(name string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, ErrUnsupported
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(name)) {
			continue
		}
		f := bytes.Fields(line[len(name):])
		if len(f) < 1 {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			break
		}
		return kb << 10, nil
	}
	return 0, ErrUnsupported
}
