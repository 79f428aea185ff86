package statsfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write returns the bytes of a statistics file with header h and payload
// body.
func write(t testing.TB, h Header, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := Write(context.Background(), &buf, &h, func(zw io.Writer) error {
		_, err := zw.Write(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// read returns the header and payload of the statistics file data.
func read(data []byte) (*Header, []byte, error) {
	var h *Header
	var body []byte
	err := Read(bytes.NewReader(data), int64(len(data)), func(x *Header) error {
		h = x
		return nil
	}, func(zr io.Reader) (err error) {
		body, err = io.ReadAll(zr)
		return err
	})
	return h, body, err
}

func TestRoundTripAndDamage(t *testing.T) {
	h := Header{Model: "gmm", Phase: 2, D: 4, K: 2, Cols: 2, Shards: 1, Basis: 9}
	body := bytes.Repeat([]byte("moments "), 100)
	good := write(t, h, body)
	got, gotBody, err := read(good)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != h.Model || got.Phase != h.Phase || got.Basis != h.Basis || !bytes.Equal(gotBody, body) {
		t.Fatalf("read back %+v and %d bytes, wrote %+v and %d", got, len(gotBody), h, len(body))
	}
	if string(good[:8]) != "SFSTATS\n" || binary.LittleEndian.Uint32(good[8:]) != Version || string(good[len(good)-8:]) != "SFSTEND\n" {
		t.Fatalf("layout: starts %q, ends %q", good[:12], good[len(good)-8:])
	}
	edit := func(f func([]byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"magic", edit(func(b []byte) { b[0] = 'X' }), ErrMagic},
		{"version", edit(func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 99) }), ErrVersion},
		{"truncated header", good[:20], ErrTruncated},
		{"truncated payload", good[:len(good)-10], ErrTruncated},
		{"trailing bytes", append(bytes.Clone(good), 0), ErrTruncated},
		{"header bit", edit(func(b []byte) { b[22] ^= 1 }), ErrChecksum},
		{"payload bit", edit(func(b []byte) { b[len(b)-Trailer-5] ^= 1 }), ErrChecksum},
		{"payload length", edit(func(b []byte) { b[len(b)-Trailer] ^= 1 }), ErrChecksum},
		{"payload crc", edit(func(b []byte) { b[len(b)-Trailer+9] ^= 1 }), ErrChecksum},
	} {
		if _, _, err := read(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestCreateOpenPeek(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.stats")
	h := Header{Model: "ica", Phase: 1, D: 3, K: 2}
	enc := func(ctx context.Context, w io.Writer) error {
		return Write(ctx, w, &h, func(zw io.Writer) error { _, err := zw.Write([]byte("x")); return err })
	}
	if err := Create(context.Background(), path, enc); err != nil {
		t.Fatal(err)
	}
	if m, err := PeekModel(path); err != nil || m != "ica" {
		t.Fatalf("PeekModel: %q, %v", m, err)
	}
	// A failing encoder leaves no file, and its error names the path.
	bad := filepath.Join(dir, "b.stats")
	err := Create(context.Background(), bad, func(context.Context, io.Writer) error { return io.ErrShortWrite })
	if !errors.Is(err, io.ErrShortWrite) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("failing encoder: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("a failed write left %d files", len(ents))
	}
	// A damaged file is refused naming the file.
	data, _ := os.ReadFile(path)
	data[len(data)-Trailer-2] ^= 1
	os.WriteFile(path, data, 0o644)
	_, err = Open(path, func(r io.ReaderAt, size int64) (*Header, error) {
		var got *Header
		err := Read(r, size, func(x *Header) error { got = x; return nil }, func(zr io.Reader) error { _, err := io.ReadAll(zr); return err })
		return got, err
	})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), path) {
		t.Fatalf("damaged file: %v", err)
	}
}

func TestMergeRules(t *testing.T) {
	in := func(path, fp string, lo, hi int64) Input {
		return Input{Path: path, Fingerprint: fp, Docs: &[2]int64{lo, hi}}
	}
	a := Header{Model: "lda", D: 5, K: 2, Shards: 1, Inputs: []Input{in("b", "2", 0, 10)}}
	b := a
	b.Inputs = []Input{in("a", "1", 0, -1)}
	if err := a.Compatible(b); err != nil {
		t.Fatalf("same fit: %v", err)
	}
	c := a
	c.K = 3
	var ie *IncompatibleError
	if err := a.Compatible(c); !errors.As(err, &ie) || ie.Field != "k" || !errors.Is(err, ErrIncompatible) {
		t.Fatalf("another k: %v", err)
	}
	// Documents [5, 10) of the same content are covered twice.
	d := a
	d.Inputs = []Input{in("copy", "2", 5, -1)}
	if err := a.Disjoint(d); !errors.Is(err, ErrOverlap) {
		t.Fatalf("overlap: %v", err)
	}
	e := a
	e.Inputs = []Input{in("b", "2", 10, -1)}
	if err := a.Disjoint(e); err != nil {
		t.Fatalf("adjacent ranges: %v", err)
	}
	// Merges in either order give the same inputs.
	ab, ba := a, b
	ab.Inputs, ba.Inputs = append([]Input(nil), a.Inputs...), append([]Input(nil), b.Inputs...)
	ab.AddShards(b)
	ba.AddShards(a)
	if ab.Shards != 2 || len(ab.Inputs) != 2 || ab.Inputs[0].Path != ba.Inputs[0].Path || ab.Inputs[0].Path != "a" {
		t.Fatalf("merged inputs %v and %v", ab.Inputs, ba.Inputs)
	}
}

// FuzzRead checks that no input makes the reader panic, and that a file
// it accepts has the header and payload that write back to the same bytes.
func FuzzRead(f *testing.F) {
	f.Add(write(f, Header{Model: "lda", Phase: 1, D: 3, K: 2}, []byte("payload")))
	f.Add(write(f, Header{Model: "gmm", Inputs: []Input{{Path: "x", Fingerprint: "f"}}}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, err := read(data)
		if err != nil {
			return
		}
		if _, back, err := read(write(t, *h, body)); err != nil || !bytes.Equal(back, body) {
			t.Fatalf("re-written file: %v", err)
		}
	})
}
