// Package mmap maps input files read-only into memory where the platform
// can, and hands the pages of a mapping back to the kernel once they have been
// read, so a pass parses straight from the page cache without its resident
// set growing with the file. Where the platform has no mmap (Windows, wasm),
// Map returns an error and callers read the file instead.
package mmap

import "os"

// PageSize is the size of a memory page: Drop works on whole pages.
var PageSize = os.Getpagesize()
