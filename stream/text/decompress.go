package text

import (
	"bufio"
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/streamfit/streamfit/stream"
)

// MaxDocBytes bounds the size of one document (a line, or a file of a
// directory) after decompression. It keeps a runaway input, such as a binary
// file without newlines, from exhausting memory; real documents are far smaller.
const MaxDocBytes = 256 << 20

// batchBytes bounds the text held by one batch, so that the in-flight batches
// of a pass stay within a fixed amount of memory however long the documents.
const batchBytes = 16 << 20

// reader is an open, possibly compressed, text file. The compression is found
// from the magic bytes, not the name, so a mislabelled file still reads.
type reader struct {
	*bufio.Reader
	f          stream.File
	n          stream.CountingReader // bytes read from the file, compressed or not
	closer     func()
	compressed bool
}

func openReader(path string) (*reader, error) {
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil, err
	}
	r := &reader{f: f, closer: func() {}}
	r.n.R = f
	raw := bufio.NewReaderSize(&r.n, 256<<10)
	head, _ := raw.Peek(4)
	switch stream.Compression(head) {
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			f.Close()
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "gzip: %v", err)
		}
		r.Reader, r.closer, r.compressed = bufio.NewReaderSize(zr, 256<<10), func() { zr.Close() }, true
	case "zstd":
		zr, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "zstd: %v", err)
		}
		r.Reader, r.closer, r.compressed = bufio.NewReaderSize(zr, 256<<10), zr.Close, true
	default:
		r.Reader = raw
	}
	return r, nil
}

func (r *reader) Close() error {
	r.closer()
	return r.f.Close()
}

// valid replaces each run of invalid UTF-8 bytes with U+FFFD: raw text is often
// dirty, and one bad byte should not stop a pass over millions of documents.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// bom is the byte order mark some editors put at the start of a UTF-8
// file; it is not text, and would otherwise become part of the first word.
const bom = "\ufeff"

// crLines wraps the text of a file whose lines end with a carriage return
// alone (classic Mac OS; such a file has no line feed at all), so that
// each CR reads as a line end.
type crLines struct{ r *bufio.Reader }

func (c crLines) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// lineEnds makes r read a file whose lines end with CR alone as if they
// ended with LF: its first 64 kB hold a CR and no LF.
func lineEnds(r *bufio.Reader) *bufio.Reader {
	head, _ := r.Peek(64 << 10)
	if bytes.IndexByte(head, '\n') >= 0 || bytes.IndexByte(head, '\r') < 0 {
		return r
	}
	return bufio.NewReaderSize(crLines{r}, 256<<10)
}
