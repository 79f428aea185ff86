package docword

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"

	"github.com/streamfit/streamfit/internal/stream"
)

// header is the three-line preamble of a docword file.
type header struct {
	D, W, NNZ int64
}

// headerLines is the number of lines before the first entry.
const headerLines = 3

// maxTerms is the largest vocabulary whose 0-based term ids fit in an int32.
const maxTerms = math.MaxInt32 + 1

// readHeader opens path, decompressing as needed, and parses its header.
func readHeader(path string) (header, error) {
	var h header
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return h, err
	}
	if st.Size() == 0 {
		return h, stream.Errorf(path, 1, -1, "", stream.ErrEmpty, "file is empty")
	}
	dec, closeDec, err := decompressor(f)
	if err != nil {
		return h, stream.Errorf(path, 1, -1, "", stream.ErrCorrupt, "cannot decompress: %v", err)
	}
	defer closeDec()
	br := bufio.NewReaderSize(dec, 4096)
	names := [headerLines]string{"D (documents)", "W (vocabulary size)", "NNZ (entries)"}
	var vals [headerLines]int64
	for i := range vals {
		line := int64(i + 1)
		b, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return h, stream.Errorf(path, line, -1, "", stream.ErrValue, "header line longer than %d bytes; expected %s", len(b), names[i])
		case err == io.EOF && len(b) == 0 && i == 0:
			return h, stream.Errorf(path, 1, -1, "", stream.ErrEmpty, "file holds no data")
		case err == io.EOF && len(b) == 0:
			return h, stream.Errorf(path, line, -1, "", stream.ErrValue, "file ends before the header line %s", names[i])
		case err != nil && err != io.EOF:
			return h, stream.Errorf(path, line, -1, "", stream.ErrCorrupt, "%v", err)
		}
		v, ok := headerValue(b)
		if !ok {
			return h, stream.Errorf(path, line, -1, "", stream.ErrValue, "header line %q: expected %s as one non-negative integer", trimLine(b), names[i])
		}
		vals[i] = v
	}
	h = header{D: vals[0], W: vals[1], NNZ: vals[2]}
	if h.W > maxTerms {
		return h, stream.Errorf(path, 2, -1, "", stream.ErrValue, "vocabulary size %d is larger than %d", h.W, int64(maxTerms))
	}
	return h, nil
}

// headerValue parses a line holding one non-negative integer, with optional
// blanks around it.
func headerValue(b []byte) (int64, bool) {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	i, n := 0, len(b)
	for i < n && isBlank(b[i]) {
		i++
	}
	v, j, ok := parseUint(b, i)
	if !ok {
		return 0, false
	}
	for j < n && isBlank(b[j]) {
		j++
	}
	return v, j == n
}

// trimLine drops the line ending, for messages.
func trimLine(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
