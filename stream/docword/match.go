package docword

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

func init() {
	stream.Register(stream.Format{
		Name:       "docword",
		Match:      Match,
		OpenDocs:   func(path string, o stream.Options) (stream.DocSource, error) { return Open(path, o) },
		CreateDocs: func(path string, o stream.WriteOptions) (stream.DocWriter, error) { return Create(path, o) },
	})
}

// Match reports how sure it is that path is a docword file: 2 when the
// (decompressed) head starts with three lines holding one non-negative integer
// each, or with the banner of a Matrix Market file, 1 when the name, without
// a .gz or .zst suffix, contains "docword" or ends in .mm or .mtx, 0
// otherwise. head is at most a few KB of the raw file.
func Match(path string, head []byte) int {
	if head != nil {
		if h := decompressHead(head, 4096); looksLikeDocword(h) || len(h) >= len(marketBanner) && bytes.EqualFold(h[:len(marketBanner)], []byte(marketBanner)) {
			return 2
		}
	}
	base, _ := stream.TrimCompression(path)
	base = strings.ToLower(filepath.Base(base))
	if strings.Contains(base, "docword") || strings.HasSuffix(base, ".mm") || strings.HasSuffix(base, ".mtx") {
		return 1
	}
	return 0
}

// looksLikeDocword checks for three one-integer header lines and, when the head
// holds a complete fourth line, that it has the three integers of an entry: a
// list of numbers one per line is not mistaken for a corpus.
func looksLikeDocword(b []byte) bool {
	for i := 0; i < 3; i++ {
		nl := bytes.IndexByte(b, '\n')
		line := b
		if nl >= 0 {
			line, b = b[:nl], b[nl+1:]
		} else {
			b = nil
			if i < 2 {
				return false
			}
		}
		if f, ok := fields(line); !ok || f != 1 {
			return false
		}
	}
	if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
		f, ok := fields(b[:nl])
		return ok && f == 3
	}
	return true
}

// fields counts the blank-separated unsigned integers on a line; ok is false if
// anything else is there.
func fields(line []byte) (n int, ok bool) {
	in := false
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			if !in {
				n++
				in = true
			}
		case c == ' ' || c == '\t' || c == '\r':
			in = false
		default:
			return n, false
		}
	}
	return n, true
}
