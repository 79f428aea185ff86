// Package sysinfo answers what the machine offers, on every platform: the
// physical memory, the free disk space under a directory, and the CPU time
// and peak resident memory of the process. Each answers 0 where the
// platform cannot tell, and callers treat 0 as unknown.
package sysinfo
