package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// progressMode is the value of --progress: auto (on when stderr is a terminal),
// on or off.
type progressMode string

func addProgressFlag(fs *flag.FlagSet) *progressMode {
	m := progressMode("auto")
	fs.Var(&m, "progress", "progress on stderr: auto (when stderr is a terminal), on, off")
	return &m
}

// String returns the mode, so that the flag reads back what was set.
func (m *progressMode) String() string { return string(*m) }

// Set parses a --progress value.
func (m *progressMode) Set(s string) error {
	if err := oneOf(s, "auto", "on", "off"); err != nil {
		return err
	}
	*m = progressMode(s)
	return nil
}

// reporter prints a progress line on stderr every half second until stopped.
type reporter struct {
	p    *stream.Progress
	stop chan struct{}
	wg   sync.WaitGroup
	w    io.Writer
	tty  bool
}

// startProgress returns a progress counter (nil when progress is off, which the
// data layer treats as a no-op) and a function that stops the display.
func (e *env) startProgress(mode progressMode, label string, total int64) (*stream.Progress, func()) {
	tty := e.terminal()
	if mode == "off" || (mode == "auto" && !tty) {
		return nil, func() {}
	}
	r := &reporter{p: stream.NewProgress(total), stop: make(chan struct{}), w: e.stderr, tty: tty}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		every := 0
		for {
			select {
			case <-r.stop:
				if r.tty {
					fmt.Fprintf(r.w, "\r\033[K%s: %s\n", label, r.p)
				} else {
					fmt.Fprintf(r.w, "%s: %s\n", label, r.p)
				}
				return
			case <-tick.C:
				if r.tty {
					fmt.Fprintf(r.w, "\r\033[K%s: %s", label, r.p)
				} else if every++; every%20 == 0 { // piped with --progress=on: every 10 s
					fmt.Fprintf(r.w, "%s: %s\n", label, r.p)
				}
			}
		}
	}()
	var once sync.Once
	return r.p, func() { once.Do(func() { close(r.stop); r.wg.Wait() }) }
}

// fileSize is the size of a file in bytes, 0 for directories and errors; it is
// only used for ETAs.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return 0
	}
	return st.Size()
}
