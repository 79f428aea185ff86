//go:build unix

package mmap

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the first size bytes of f read-only and shared, and tells the
// kernel they will be read in order. Only an *os.File is mapped: another
// reader (a file of an object store) gives errors.ErrUnsupported, and the
// caller reads it instead.
func Map(f io.ReaderAt, size int) ([]byte, error) {
	osf, ok := f.(*os.File)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	data, err := unix.Mmap(int(osf.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	unix.Madvise(data, unix.MADV_SEQUENTIAL) // a hint: its failure changes nothing
	return data, nil
}

// Unmap ends a mapping made by Map; no slice of it may be used afterwards.
func Unmap(data []byte) error { return unix.Munmap(data) }

// Drop takes the pages of b, a page-aligned part of a mapping, out of the
// process's resident set. The page cache keeps them: a page read again
// faults back in, unchanged.
func Drop(b []byte) {
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
