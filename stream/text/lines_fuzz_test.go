package text

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// referenceLines splits data the way the text-lines format defines it: lines
// end with "\n", a "\r" before it (or at the end of the file) is dropped, a
// final line needs no newline, and invalid UTF-8 becomes U+FFFD.
func referenceLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.ToValidUTF8(strings.TrimSuffix(l, "\r"), "\uFFFD")
	}
	return lines
}

// referenceSource is what the text-lines source reads of a file holding
// data: lines ending with CR alone when the first 64 kB hold a CR and no
// LF, a byte order mark at the start dropped.
func referenceSource(data []byte) []byte {
	head := data[:min(len(data), 64<<10)]
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		data = bytes.ReplaceAll(data, []byte{'\r'}, []byte{'\n'})
	}
	return bytes.TrimPrefix(data, []byte(bom))
}

// FuzzLines checks readLine through a tiny buffer (lines longer than the
// buffer, CRLF split across refills) and the whole text-lines source over a
// plain, gzip or zstd file against referenceLines. Seeds are in
// testdata/fuzz/FuzzLines; run longer with
//
//	go test -run '^$' -fuzz '^FuzzLines$' -fuzztime 5m ./stream/text
func FuzzLines(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\nb\r\n", "\n\n", "x\ry\n\r", "caf\xc3\n\xff\xfe\r", strings.Repeat("long line ", 10) + "\r\nend"} {
		for c := range uint8(3) {
			f.Add([]byte(s), c)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, comp uint8) {
		want := referenceLines(data)

		// readLine alone, with a buffer far smaller than the lines.
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var got []string
		for {
			line, err := readLine(r, nil)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, valid(string(line)))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readLine: %q, want %q", got, want)
		}

		// The whole source over a (compressed) file, in small batches.
		kind := []string{"", "gzip", "zstd"}[comp%3]
		path := filepath.Join(t.TempDir(), "lines.txt")
		writeFile(t, path, compress(t, kind, data))
		src, err := OpenLines(path, stream.Options{BatchRows: 3, Workers: 2})
		if err == nil {
			got, err = collectTexts(t, src)
		}
		read := referenceSource(data)
		want = referenceLines(read)
		var se *stream.Error
		switch nul := bytes.IndexByte(read, 0); {
		case nul >= 0:
			// Binary data: refused at the line of the first NUL byte.
			line := int64(bytes.Count(read[:nul], []byte{'\n'})) + 1
			if !errors.Is(err, stream.ErrFormat) || !errors.As(err, &se) || se.Line != line {
				t.Fatalf("%s, a NUL byte on line %d: %v, want a binary-data error there", kind, line, err)
			}
		case len(want) == 0:
			if !errors.Is(err, stream.ErrEmpty) {
				t.Fatalf("%s, no lines: %v, want an empty-input error", kind, err)
			}
		case err != nil:
			t.Fatalf("%s: %v", kind, err)
		case !reflect.DeepEqual(got, want):
			t.Fatalf("%s: %q, want %q", kind, got, want)
		}
	})
}
