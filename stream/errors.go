package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors classify what is wrong with an input; test with errors.Is.
var (
	// ErrEmpty: the file holds no data at all.
	ErrEmpty = errors.New("empty input")
	// ErrFormat: the format is unknown or cannot be detected.
	ErrFormat = errors.New("unknown format")
	// ErrCorrupt: the bytes do not decode (truncated or damaged file, bad compression).
	ErrCorrupt = errors.New("corrupt or truncated input")
	// ErrSchema: a column is missing or has the wrong type.
	ErrSchema = errors.New("wrong schema")
	// ErrValue: a value is out of range: negative, NaN, non-integer count, term id
	// outside the vocabulary, header that disagrees with the body.
	ErrValue = errors.New("invalid value")
	// ErrOrder: documents are not sorted or not contiguous.
	ErrOrder = errors.New("documents out of order")
)

// Error locates a problem in an input file: the path and, when known, the line
// (text formats, 1-based), row (0-based document or sample index) and column.
type Error struct {
	Path   string
	Line   int64 // 0 when not applicable
	Row    int64 // -1 when not applicable
	Column string
	// Offset is the byte of the file where the error was found, for damage
	// that has no line (0 when not applicable).
	Offset int64
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Row >= 0 {
		fmt.Fprintf(&b, ": row %d", e.Row)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %q", e.Column)
	}
	if e.Offset > 0 {
		fmt.Fprintf(&b, ": byte %d", e.Offset)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error at a file position. kind is one of the sentinel errors
// (or nil); the message is formatted from format and args. Use line 0 and row -1
// when they do not apply.
func Errorf(path string, line, row int64, column string, kind error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	var err error
	if kind != nil {
		err = fmt.Errorf("%s (%w)", msg, kind)
	} else {
		err = errors.New(msg)
	}
	return &Error{Path: path, Line: line, Row: row, Column: column, Err: err}
}

// DecompressError is the error of a read of path that failed in its
// decompressor after off bytes of the compressed file: the line the reader had
// reached means nothing (a damaged stream decodes to garbage lines, and gzip
// checks its data only at the end), so the byte offset is reported instead.
func DecompressError(path string, off int64, err error) error {
	e := Errorf(path, 0, -1, "", ErrCorrupt, "damaged compressed data (%v), found by this byte; the damage may be anywhere before it", err).(*Error)
	e.Offset = max(off, 1)
	return e
}

// Locate names path in err unless err already is an *Error (which names its
// file and position) or a cancellation: the errors a pass's pipeline
// returns without knowing the file, such as a *PanicError, reach the user
// with the file they are about.
func Locate(path string, err error) error {
	var se *Error
	if err == nil || errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &Error{Path: path, Row: -1, Err: err}
}
