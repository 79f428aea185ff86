package columnar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Parquet pages are decompressed by arrow-go's codecs into a buffer of the
// size the page header gives. Its zstd and snappy codecs trust the size the
// compressed data itself declares instead: a damaged zstd frame header asked
// for gigabytes (the pass then spent minutes zeroing memory, or the process
// ran out of it, which no recover catches), a snappy one for up to 4 GB. The
// codecs registered here refuse a page that decodes to more than its
// buffer, and otherwise decode as arrow-go's do. Registering replaces
// arrow-go's codecs for the whole process (compress.RegisterCodec).
func init() {
	for _, c := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy} {
		orig, err := compress.GetCodec(c)
		if err != nil {
			continue
		}
		s, ok := orig.(streamingCodec)
		if !ok {
			continue
		}
		compress.RegisterCodec(c, boundedCodec{s, c})
	}
}

// streamingCodec is what arrow-go's zstd and snappy codecs implement.
type streamingCodec interface {
	compress.Codec
	compress.StreamingCodec
}

// boundedCodec is an arrow-go codec whose block decoding is bounded by the
// destination buffer; encoding and streams are the original codec's.
type boundedCodec struct {
	streamingCodec
	kind compress.Compression
}

// errTooLarge: compressed data declares more bytes than the page holds.
var errTooLarge = errors.New("the compressed data declares more bytes than the page header")

// boundedZstd decodes whole blocks into at most the capacity of dst.
var boundedZstd = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only bad options fail
	}
	return d
})

func (c boundedCodec) Decode(dst, src []byte) []byte {
	dst, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // the contract of compress.Codec.Decode
	}
	return dst
}

// DecodeWithError decodes src into dst, which must be sized to hold the
// decoded data (compress.Codec); without a buffer (nil dst), it decodes
// as the original codec does.
func (c boundedCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if cap(dst) == 0 {
		return compress.Decode(c.streamingCodec, dst, src)
	}
	switch c.kind {
	case compress.Codecs.Zstd:
		out, err := boundedZstd().DecodeAll(src, dst[:0])
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			err = errTooLarge
		}
		return out, err
	case compress.Codecs.Snappy:
		n, k := binary.Uvarint(src)
		if k <= 0 {
			return nil, errors.New("snappy: corrupt input")
		}
		if n > uint64(len(dst)) {
			return nil, fmt.Errorf("%w (snappy: %d, buffer %d)", errTooLarge, n, len(dst))
		}
	}
	return compress.Decode(c.streamingCodec, dst, src)
}
