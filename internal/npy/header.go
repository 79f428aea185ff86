// Package npy reads the header of NumPy .npy arrays (format versions 1 to
// 3): element type, byte order, memory order and shape. The readers of
// topic matrices (models) and of scipy's sparse .npz files (stream/npz)
// read the data after it themselves.
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Magic starts every .npy file.
const Magic = "\x93NUMPY"

// Header is what an .npy header says of its array.
type Header struct {
	// Kind is the element kind: 'f' float, 'i' signed or 'u' unsigned
	// integer, 'b' boolean, 'S' bytes, 'U' unicode (UTF-32); Size its
	// bytes per element.
	Kind byte
	Size int
	// Order is the byte order of multi-byte elements.
	Order binary.ByteOrder
	// Fortran is true for column-major arrays.
	Fortran bool
	// Shape is the array's dimensions (empty for a scalar); Len their
	// product.
	Shape []int
	// Descr is the dtype as NumPy wrote it, for messages; Bytes the length
	// of the whole header, magic included (the data starts after it).
	Descr string
	Bytes int64
}

// Len is the number of elements.
func (h Header) Len() int64 {
	n := int64(1)
	for _, s := range h.Shape {
		n *= int64(s)
	}
	return n
}

var (
	descrRe   = regexp.MustCompile(`'descr'\s*:\s*'([<>=|])([a-zA-Z])(\d+)'`)
	fortranRe = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	shapeRe   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ErrNotNPY is wrapped by the errors of a stream that is not an .npy array.
var ErrNotNPY = errors.New("not a NumPy .npy array")

// ReadHeader reads the header of an .npy array from r, leaving r at the
// first byte of the data.
func ReadHeader(r io.Reader) (Header, error) {
	var h Header
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrNotNPY, fmt.Sprintf(format, a...))
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:6]) != Magic {
		return h, bad("no NumPy magic")
	}
	var hlen int
	switch head[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, bad("truncated header")
		}
		hlen, h.Bytes = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, bad("truncated header")
		}
		hlen, h.Bytes = int(binary.LittleEndian.Uint32(b[:])), 12
	default:
		return h, bad("format version %d.%d", head[6], head[7])
	}
	if hlen > 1<<20 {
		return h, bad("header of %d bytes", hlen)
	}
	h.Bytes += int64(hlen)
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return h, bad("truncated header")
	}
	s := string(hb)
	m := descrRe.FindStringSubmatch(s)
	if m == nil {
		return h, bad("no simple element type in %q", strings.TrimSpace(s))
	}
	h.Descr = m[1] + m[2] + m[3]
	h.Kind = m[2][0]
	h.Size, _ = strconv.Atoi(m[3])
	if h.Kind == 'U' {
		h.Size *= 4
	}
	h.Order = binary.LittleEndian
	if m[1] == ">" {
		h.Order = binary.BigEndian
	}
	fo := fortranRe.FindStringSubmatch(s)
	if fo == nil {
		return h, bad("no fortran_order in %q", strings.TrimSpace(s))
	}
	h.Fortran = fo[1] == "True"
	sm := shapeRe.FindStringSubmatch(s)
	if sm == nil {
		return h, bad("no shape in %q", strings.TrimSpace(s))
	}
	for _, d := range strings.Split(sm[1], ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return h, bad("shape (%s)", sm[1])
		}
		h.Shape = append(h.Shape, n)
	}
	return h, nil
}
