//go:build !unix

package mmap

import (
	"errors"
	"io"
)

// Map reports that this platform maps no files: callers read them instead.
func Map(f io.ReaderAt, size int) ([]byte, error) { return nil, errors.ErrUnsupported }

// Unmap does nothing: Map never succeeds here.
func Unmap(data []byte) error { return nil }

// Drop does nothing: Map never succeeds here.
func Drop(b []byte) {}
