//go:build !linux && !darwin

package lda

import "os"

// peakKnown says whether peakKB measures anything here.
const peakKnown = false

// peakKB is 0: this platform does not report a child's peak RSS.
func peakKB(ps *os.ProcessState) int64 { return 0 }
