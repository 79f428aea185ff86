// Package rss measures the peak resident set size of the current process, for
// the benchmarks and memory tests that check memory does not grow with the
// number of rows. It reads Linux's /proc/self/status; elsewhere it reports
// ErrUnsupported.
package rss

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
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
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, ErrUnsupported
	}
	defer f.Close()
	var buf [statusSize]byte
	return readField(f, buf[:], name)
}

// statusSize holds the whole of /proc/self/status (about 1.5 kB).
const statusSize = 8192

// readField reads /proc/self/status through f into buf, from offset 0, and
// returns the named field (in kB there) in bytes. It allocates nothing, so
// sampling memory does not itself feed the collector: a sampler producing
// garbage at a steady rate makes the measured heap climb towards its
// collection goal at that rate, and a short run then peaks lower than a
// long one for no fault of the code measured.
func readField(f *os.File, buf []byte, name string) (int64, error) {
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return 0, ErrUnsupported
	}
	b := buf[:n]
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.HasPrefix(line, []byte(name)) {
			continue
		}
		line = bytes.TrimLeft(line[len(name):], " \t")
		var kb int64
		i := 0
		for ; i < len(line) && '0' <= line[i] && line[i] <= '9'; i++ {
			kb = kb*10 + int64(line[i]-'0')
		}
		if i == 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, ErrUnsupported
}

// SampleAnon samples Anon every interval on a goroutine until the returned
// function is called, which returns the largest value seen (0 where /proc is
// missing). Unlike Peak it leaves out pages mapped from files, such as a
// memory-mapped Arrow input, which the kernel may drop at any time.
func SampleAnon(interval time.Duration) (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	exited := make(chan struct{})
	// One open file and one buffer for every sample (see readField).
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return func() int64 { return 0 }
	}
	var buf [statusSize]byte
	sample := func() {
		if a, err := readField(f, buf[:], "RssAnon:"); err == nil && a > peak.Load() {
			peak.Store(a)
		}
	}
	go func() {
		defer close(exited)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-exited
		sample()
		f.Close()
		return peak.Load()
	}
}
