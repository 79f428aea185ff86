package text

import (
	"bufio"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/streamfit/streamfit/internal/stream"
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
