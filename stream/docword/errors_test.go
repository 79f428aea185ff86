package docword

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfit/streamfit/stream"
)

// checkErr wants a *stream.Error of the given kind naming file and line; it
// returns the message.
func checkErr(t *testing.T, err error, kind error, file string, line int64) string {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", kind)
	}
	var se *stream.Error
	if !errors.As(err, &se) || !errors.Is(err, kind) {
		t.Fatalf("got %v (%T), want a *stream.Error wrapping %v", err, err, kind)
	}
	msg := err.Error()
	if !strings.Contains(msg, file) || se.Line != line || !strings.Contains(msg, fmt.Sprintf("line %d", line)) {
		t.Fatalf("got %q (line %d), want file %s line %d", msg, se.Line, file, line)
	}
	return msg
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name, in string
		kind     error
		line     int64
		mention  string // extra text the message must hold
	}{
		{"empty", "", stream.ErrEmpty, 1, ""},
		{"short header", "3\n", stream.ErrValue, 2, ""},
		{"header not a number", "x\n2\n1\n", stream.ErrValue, 1, ""},
		{"negative NNZ", "1\n2\n-1\n", stream.ErrValue, 3, ""},
		{"two numbers in header", "1 2\n2\n1\n", stream.ErrValue, 1, ""},
		{"fewer entries than NNZ", "2\n3\n2\n1 1 1\n", stream.ErrValue, 3, "NNZ=2"},
		{"more entries than NNZ", "2\n3\n1\n1 1 1\n1 2 1\n", stream.ErrValue, 5, "NNZ=1"},
		{"doc beyond D", "1\n3\n1\n2 1 1\n", stream.ErrValue, 4, ""},
		{"doc zero", "1\n3\n1\n0 1 1\n", stream.ErrValue, 4, ""},
		{"word beyond W", "1\n3\n1\n1 4 1\n", stream.ErrValue, 4, ""},
		{"word zero", "1\n3\n1\n1 0 1\n", stream.ErrValue, 4, ""},
		{"letters", "1\n3\n2\n1 1 1\n1 2 x\n", stream.ErrValue, 5, ""},
		{"fraction", "1\n3\n1\n1 2 1.5\n", stream.ErrValue, 4, "not an integer"},
		{"exponent", "1\n3\n1\n1 2 1e3\n", stream.ErrValue, 4, "count 1e3 is a number but not written as an integer: use digits only (1000)"},
		{"NaN", "1\n3\n1\n1 2 NaN\n", stream.ErrValue, 4, "NaN"},
		{"negative count", "1\n3\n1\n1 2 -3\n", stream.ErrValue, 4, "negative"},
		{"overflow", "1\n3\n1\n1 2 99999999999999999999999\n", stream.ErrValue, 4, ""},
		{"count beyond int32", "1\n3\n1\n1 2 3000000000\n", stream.ErrValue, 4, ""},
		{"two fields", "1\n3\n1\n1 2\n", stream.ErrValue, 4, "found 2"},
		{"four fields", "1\n3\n1\n1 2 3 4\n", stream.ErrValue, 4, "found 4"},
		{"blank line", "1\n3\n2\n1 2 3\n\n", stream.ErrValue, 5, "found 0"},
		{"backwards", "3\n3\n3\n2 1 1\n1 1 1\n3 1 1\n", stream.ErrOrder, 5, "line 4"},
		{"not contiguous", "3\n3\n4\n1 1 1\n2 1 1\n2 3 1\n1 2 1\n3 1 1\n", stream.ErrOrder, 7, "line 4"},
		{"duplicate term", "1\n3\n3\n1 2 1\n1 3 1\n1 2 5\n", stream.ErrValue, 6, "twice"},
		{"error after many good lines", "3\n9\n10\n1 1 1\n1 2 1\n1 3 1\n1 4 1\n2 1 1\n2 2 1\n2 3 1\n3 1 1\n3 2 1\n2 9 1\n", stream.ErrOrder, 13, "line 8"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		path := writeFile(t, dir, fmt.Sprintf("docword.case%d.txt", i), c.in)
		// Tiny chunks put every line in its own chunk, so the checks that span
		// chunks (order, duplicates, NNZ) are exercised too.
		for _, chunk := range []int{0, 7, 16} {
			t.Run(fmt.Sprintf("%s/%d", c.name, chunk), func(t *testing.T) {
				_, _, err := readAll(path, stream.Options{Workers: 3}, chunk)
				msg := checkErr(t, err, c.kind, filepath.Base(path), c.line)
				if !strings.Contains(msg, c.mention) {
					t.Fatalf("message %q does not mention %q", msg, c.mention)
				}
			})
		}
	}
}

func TestCorruptCompression(t *testing.T) {
	dir := t.TempDir()
	var body bytes.Buffer
	body.WriteString("400\n50\n4000\n")
	for d := 1; d <= 400; d++ {
		for w := 1; w <= 10; w++ {
			fmt.Fprintf(&body, "%d %d %d\n", d, w*3, d%7+1)
		}
	}
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body.Bytes())
	zw.Close()
	ze, _ := zstd.NewWriter(&zs)
	ze.Write(body.Bytes())
	ze.Close()
	flipped := bytes.Clone(gz.Bytes())
	flipped[len(flipped)/2] ^= 0xff
	cases := []struct {
		name string
		data []byte
	}{
		{"docword.trunc.txt.gz", gz.Bytes()[:gz.Len()/2]},
		{"docword.flip.txt.gz", flipped},
		{"docword.trunc.txt.zst", zs.Bytes()[:zs.Len()/2]},
		{"docword.head.txt.gz", []byte{0x1f, 0x8b, 1, 2, 3}},
		{"docword.crc.txt.gz", append(bytes.Clone(gz.Bytes()[:gz.Len()-8]), 0, 0, 0, 0, 0, 0, 0, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name, string(c.data))
			_, _, err := readAll(path, stream.Options{}, 0)
			var se *stream.Error
			if !errors.Is(err, stream.ErrCorrupt) || !errors.As(err, &se) || !strings.Contains(err.Error(), c.name) {
				t.Fatalf("got %v, want ErrCorrupt naming the file", err)
			}
			// A truncated stream names the line it ends in; damaged data
			// decodes to garbage lines (gzip checks its data only at the
			// end), so it names the byte where the damage was found, never
			// a line, which could lie past the end of the file.
			damaged := strings.Contains(c.name, "flip") || strings.Contains(c.name, "crc")
			switch {
			case damaged && (se.Line != 0 || se.Offset < 1):
				t.Fatalf("got %v, want the byte offset of the damage and no line", err)
			case !damaged && (se.Line < 1 || se.Line > 4003):
				t.Fatalf("got %v, want a line of the file (1..4003)", err)
			}
		})
	}
}

// TestBodyPanicGoesOn: the reader hands batches on inside stream.Safe; a
// loop body that panics must reach the caller as its own panic, not be
// yielded as an error (which the runtime turns into "range function
// continued iteration after loop body panic").
func TestBodyPanicGoesOn(t *testing.T) {
	var b strings.Builder
	b.WriteString("40\n5\n80\n")
	for d := 1; d <= 40; d++ {
		fmt.Fprintf(&b, "%d 1 2\n%d 3 1\n", d, d)
	}
	path := writeFile(t, t.TempDir(), "p.docword", b.String())
	src, err := stream.Open(path, stream.Options{BatchRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := func() (p any) {
		defer func() { p = recover() }()
		for _, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			panic("body")
		}
		return nil
	}()
	var pe *stream.PanicError
	if err, ok := got.(error); !ok || !errors.As(err, &pe) || pe.Value != "body" {
		t.Fatalf("recovered %v (%T), want the body's panic", got, got)
	}
}
