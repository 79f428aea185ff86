package docword

import (
	"bytes"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func zstdBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := z.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZstdReuse reads streams one after another through decompressor, which
// hands each a released decoder: every stream decodes to its own content,
// also after a truncated one failed half-way.
func TestZstdReuse(t *testing.T) {
	a := bytes.Repeat([]byte("1 2 3\n4 5 6\n"), 50000)
	b := bytes.Repeat([]byte("7 8 9\n"), 70000)
	za, zb := zstdBytes(t, a), zstdBytes(t, b)
	read := func(data []byte) ([]byte, error) {
		dec, closeDec, err := decompressor(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		defer closeDec()
		return io.ReadAll(dec)
	}
	for i, c := range []struct {
		in, want []byte
		fail     bool
	}{
		{za, a, false}, {zb, b, false}, {za[:len(za)/2], nil, true}, {zb, b, false}, {za, a, false},
	} {
		got, err := read(c.in)
		if c.fail {
			if err == nil {
				t.Errorf("stream %d: truncated stream read without an error", i)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("stream %d: got %d bytes (err %v), want %d", i, len(got), err, len(c.want))
		}
	}
	// The head of a file decodes as a prefix of its content.
	if h := decompressHead(zb, 4096); !bytes.Equal(h, b[:4096]) {
		t.Errorf("decompressHead: got %q…", h[:min(len(h), 20)])
	}
}
