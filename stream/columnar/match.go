package columnar

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// Format names as registered with package stream.
const (
	FormatParquet     = "parquet"
	FormatArrow       = "arrow"
	FormatArrowStream = "arrow-stream"
)

var (
	magicParquet = []byte("PAR1")
	magicArrow   = []byte("ARROW1")
	// An IPC stream starts with a continuation marker before its schema message.
	magicStream = []byte{0xff, 0xff, 0xff, 0xff}
)

func init() {
	stream.Register(stream.Format{
		Name:       FormatParquet,
		Match:      matcher(magicParquet, ".parquet", ".pq"),
		OpenDocs:   func(p string, o stream.Options) (stream.DocSource, error) { return openDocs(p, kindParquet, o) },
		OpenDense:  func(p string, o stream.Options) (stream.DenseSource, error) { return openDense(p, kindParquet, o) },
		OpenTexts:  func(p string, o stream.Options) (stream.TextSource, error) { return openTexts(p, kindParquet, o) },
		CreateDocs: func(p string, o stream.WriteOptions) (stream.DocWriter, error) { return createDocs(p, kindParquet, o) },
		CreateDense: func(p string, o stream.WriteOptions) (stream.DenseWriter, error) {
			return createDense(p, kindParquet, o)
		},
	})
	stream.Register(stream.Format{
		Name:        FormatArrow,
		Match:       matcher(magicArrow, ".arrow", ".feather", ".ipc"),
		OpenDocs:    func(p string, o stream.Options) (stream.DocSource, error) { return openDocs(p, kindArrow, o) },
		OpenDense:   func(p string, o stream.Options) (stream.DenseSource, error) { return openDense(p, kindArrow, o) },
		OpenTexts:   func(p string, o stream.Options) (stream.TextSource, error) { return openTexts(p, kindArrow, o) },
		CreateDocs:  func(p string, o stream.WriteOptions) (stream.DocWriter, error) { return createDocs(p, kindArrow, o) },
		CreateDense: func(p string, o stream.WriteOptions) (stream.DenseWriter, error) { return createDense(p, kindArrow, o) },
	})
	stream.Register(stream.Format{
		Name:       FormatArrowStream,
		Match:      matcher(magicStream, ".arrows"),
		OpenDocs:   func(p string, o stream.Options) (stream.DocSource, error) { return openDocs(p, kindStream, o) },
		OpenDense:  func(p string, o stream.Options) (stream.DenseSource, error) { return openDense(p, kindStream, o) },
		OpenTexts:  func(p string, o stream.Options) (stream.TextSource, error) { return openTexts(p, kindStream, o) },
		CreateDocs: func(p string, o stream.WriteOptions) (stream.DocWriter, error) { return createDocs(p, kindStream, o) },
		CreateDense: func(p string, o stream.WriteOptions) (stream.DenseWriter, error) {
			return createDense(p, kindStream, o)
		},
	})
}

// matcher scores a path: 2 when the content starts with magic, 1 when the name
// has one of exts (after stripping nothing: columnar files carry their own
// compression), 0 otherwise.
func matcher(magic []byte, exts ...string) func(string, []byte) int {
	return func(path string, head []byte) int {
		if len(head) > 0 && bytes.HasPrefix(head, magic) {
			return 2
		}
		ext := strings.ToLower(filepath.Ext(path))
		for _, e := range exts {
			if ext == e {
				return 1
			}
		}
		return 0
	}
}

// kind is one of the three container formats.
type kind int

const (
	kindParquet kind = iota
	kindArrow
	kindStream
)

func (k kind) String() string {
	switch k {
	case kindParquet:
		return FormatParquet
	case kindArrow:
		return FormatArrow
	}
	return FormatArrowStream
}
