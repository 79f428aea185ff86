//go:build !unix

package main

import "time"

var begin = time.Now()

// cpu returns the wall time since the start where the process's CPU time
// is not at hand.
func cpu() time.Duration { return time.Since(begin) }
