package docword

import (
	"bytes"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfit/streamfit/stream"
)

// decompressor wraps r in the decoder its first bytes call for. Detection is by
// magic number, not by suffix, so a renamed file still reads. close releases the
// decoder (a zstd decoder holds memory until closed).
func decompressor(r io.Reader) (dec io.Reader, close func(), err error) {
	br := newPeekReader(r)
	head := br.peek(4)
	switch stream.Compression(head) {
	case "gzip":
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case "zstd":
		z, err := getZstd(br)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { putZstd(z) }, nil
	}
	return br, func() {}, nil
}

// zstdDecoders keeps released zstd decoders. A decoder allocates its window
// ring (the window the file was written with plus two blocks: 8.4 MB for the
// default level) when it first decodes, whether it then reads 4 KB or the
// whole file, and keeps it across Reset. Sniffing the format (Match), reading
// the header and the pass itself open one decoder each, so without reuse a
// pass starts with two rings of garbage: they raise the collector's heap
// goal while the pass warms up, and with it a peak RSS that then depends on
// when the collections fall (67–86 MB for one 1M-document file).
var zstdDecoders sync.Pool

// getZstd returns a decoder reading r: one goroutine (decompression runs on
// the splitter while the parse workers use the other cores) and low memory
// (buffers sized to the blocks seen rather than to the largest possible).
func getZstd(r io.Reader) (*zstd.Decoder, error) {
	if z, ok := zstdDecoders.Get().(*zstd.Decoder); ok {
		if err := z.Reset(r); err == nil {
			return z, nil
		}
		z.Close()
	}
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
}

// putZstd drops z's reference to its input and keeps z for the next reader.
func putZstd(z *zstd.Decoder) {
	if z.Reset(nil) != nil {
		z.Close()
		return
	}
	zstdDecoders.Put(z)
}

// peekReader lets the first few bytes be inspected and then read again.
type peekReader struct {
	r   io.Reader
	buf []byte
}

func newPeekReader(r io.Reader) *peekReader { return &peekReader{r: r} }

func (p *peekReader) peek(n int) []byte {
	for len(p.buf) < n {
		tmp := make([]byte, n-len(p.buf))
		m, err := p.r.Read(tmp)
		p.buf = append(p.buf, tmp[:m]...)
		if err != nil {
			break
		}
	}
	return p.buf
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// decompressHead decodes as much of a compressed file's first bytes as it can,
// up to limit bytes, for content sniffing; it returns nil if nothing decodes.
func decompressHead(head []byte, limit int) []byte {
	if stream.Compression(head) == "" {
		return head
	}
	dec, closeDec, err := decompressor(bytes.NewReader(head))
	if err != nil {
		return nil
	}
	defer closeDec()
	out := make([]byte, limit)
	n, _ := io.ReadFull(dec, out)
	return out[:n]
}
