package docword

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// header is the preamble of a docword file: three lines holding D, W and
// NNZ; or, for a Matrix Market coordinate file (what gensim's MmCorpus
// writes: documents as rows, terms as columns), its banner, comment lines
// and one line holding D W NNZ.
type header struct {
	D, W, NNZ int64
	// lines is the number of lines before the first entry.
	lines int64
	// market is true for a Matrix Market file, whose counts may be written
	// as reals with a zero fraction ("2.0").
	market bool
}

// fieldLine is the line of the header that gave D (0), W (1) or NNZ (2),
// for messages: a Matrix Market file gives all three on its size line.
func (h header) fieldLine(i int) int64 {
	if h.market {
		return h.lines
	}
	return int64(i + 1)
}

// marketBanner starts a Matrix Market file.
const marketBanner = "%%MatrixMarket"

// maxTerms is the largest vocabulary whose 0-based term ids fit in an int32.
const maxTerms = math.MaxInt32 + 1

// readHeader opens path, decompressing as needed, and parses its header.
func readHeader(path string) (header, error) {
	var h header
	f, err := stream.OpenFile(path)
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
	// The banner is matched without regard to case, as the format's
	// readers do (scipy's mmread, gensim's MmReader).
	if head, _ := br.Peek(len(marketBanner)); strings.EqualFold(string(head), marketBanner) {
		return readMarketHeader(path, br)
	}
	names := [3]string{"D (documents)", "W (vocabulary size)", "NNZ (entries)"}
	var vals [3]int64
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
	h = header{D: vals[0], W: vals[1], NNZ: vals[2], lines: 3}
	if h.W > maxTerms {
		return h, stream.Errorf(path, 2, -1, "", stream.ErrValue, "vocabulary size %d is larger than %d", h.W, int64(maxTerms))
	}
	return h, nil
}

// readMarketHeader parses the header of a Matrix Market file: the banner
// "%%MatrixMarket matrix coordinate real|integer general", comment lines
// starting with %, and the size line "rows columns entries" (gensim pads it
// with blanks), rows being the documents and columns the terms.
func readMarketHeader(path string, br *bufio.Reader) (header, error) {
	h := header{market: true}
	line := int64(0)
	next := func() ([]byte, error) {
		line++
		b, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, stream.Errorf(path, line, -1, "", stream.ErrValue, "header line longer than %d bytes", len(b))
		case err == io.EOF && len(b) == 0:
			return nil, stream.Errorf(path, line, -1, "", stream.ErrValue, "file ends in its Matrix Market header, before the size line")
		case err != nil && err != io.EOF:
			return nil, stream.Errorf(path, line, -1, "", stream.ErrCorrupt, "%v", err)
		}
		return b, nil
	}
	b, err := next()
	if err != nil {
		return h, err
	}
	f := strings.Fields(strings.ToLower(string(b)))
	if len(f) != 5 || f[1] != "matrix" || f[2] != "coordinate" || (f[3] != "real" && f[3] != "integer" && f[3] != "double") || f[4] != "general" {
		return h, stream.Errorf(path, 1, -1, "", stream.ErrFormat, "Matrix Market banner %q: want %s matrix coordinate real|integer general (a sparse matrix of counts, documents as rows)", trimLine(b), marketBanner)
	}
	for {
		if b, err = next(); err != nil {
			return h, err
		}
		if len(b) == 0 || b[0] != '%' {
			break
		}
	}
	d, w, nnz, ok := parseEntry(bytes.TrimSuffix(b, []byte("\n")), false) // three integers, as an entry's
	if !ok {
		return h, stream.Errorf(path, line, -1, "", stream.ErrValue, "Matrix Market size line %q: expected three non-negative integers, documents terms entries", trimLine(b))
	}
	h.D, h.W, h.NNZ, h.lines = d, w, nnz, line
	if h.W > maxTerms {
		return h, stream.Errorf(path, line, -1, "", stream.ErrValue, "vocabulary size %d is larger than %d", h.W, int64(maxTerms))
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
