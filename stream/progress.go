package stream

import (
	core "github.com/streamfit/streamfit/internal/stream"
)

// Progress counts rows and bytes read by a pass (Options.Progress) or written
// by a writer (WriteOptions.Progress). It is safe for concurrent use and a nil
// *Progress ignores every call.
type Progress = core.Progress

// NewProgress starts a progress counter; total is the expected number of bytes
// (0 when unknown), used for the ETA.
func NewProgress(total int64) *Progress { return core.NewProgress(total) }

// DefaultInflightBytes is the byte budget of a pass when Options.InflightBytes
// is unset.
const DefaultInflightBytes = core.DefaultInflightBytes

// Warner receives the warnings of a source (Options.Warn): what it passed over
// without failing, such as binary files in a directory of text files.
type Warner = core.Warner

// NewWarner returns a Warner that hands each warning to f.
func NewWarner(f func(msg string)) *Warner { return core.NewWarner(f) }
