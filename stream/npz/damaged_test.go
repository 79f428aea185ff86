package npz

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// A damaged .npz is an error naming the file, the member and what is
// wrong: a stored count changed (only the member's CRC-32 shows it), a
// truncated file (with the byte it ends at), a bad value (with its
// element's index), a file rewritten between passes.
func TestDamagedNPZ(t *testing.T) {
	dir := t.TempDir()
	n := 6000
	m := csr{format: "csr", rows: n, cols: 10, dataType: "<i8"}
	m.indptr = append(m.indptr, 0)
	for i := range n {
		m.ind = append(m.ind, float64(i%10))
		m.data = append(m.data, 3)
		m.indptr = append(m.indptr, float64(i+1))
	}
	good := m.bytes(t)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The count of the last element of data.npy, stored (not deflated):
	// 3 becomes 2, still a valid count.
	at := bytes.LastIndex(good, []byte{3, 0, 0, 0, 0, 0, 0, 0})
	crc := bytes.Clone(good)
	crc[at] = 2
	m.data[5000] = 2.5
	m.dataType = "<f8"
	bad := m.bytes(t)
	for _, c := range []struct {
		name, member, want string
		data               []byte
		kind               error
	}{
		{"crc.npz", "data.npy", "does not match its CRC-32", crc, stream.ErrCorrupt},
		{"cut-in-member.npz", "indices.npy", "truncated: the file ends at byte 300, inside this member", good[:300], stream.ErrCorrupt},
		{"cut-before-directory.npz", "", "where the zip directory should follow", good[:bytes.Index(good, []byte("PK\x01\x02"))], stream.ErrCorrupt},
		{"cut-in-directory.npz", "", "the zip directory from byte", good[:len(good)-30], stream.ErrCorrupt},
		{"element.npz", "data.npy", "element 5000: count 2.5 is not a whole number", bad, stream.ErrValue},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := write(c.name, c.data)
			_, err := docsOf(t, path, stream.Options{BatchRows: 700})
			var se *stream.Error
			if !errors.Is(err, c.kind) || !errors.As(err, &se) || se.Path != path || se.Column != c.member || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want %v in %s saying %q", err, c.kind, c.member, c.want)
			}
		})
	}

	path := write("changed.npz", good)
	src, err := Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Collect(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	write("changed.npz", crc)
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
	if _, err := stream.Collect(context.Background(), src); !errors.Is(err, stream.ErrChanged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a file rewritten between passes: %v", err)
	}
}
