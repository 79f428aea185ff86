package shard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
)

// A directory's description follows its tree: a file rewritten in a
// subdirectory (its parent directories untouched) or added changes the
// fingerprint, a hidden file does not, and the size is the files' total.
func TestDescribeDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "year=2024")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.parquet"), "aaaa")
	write(filepath.Join(sub, "b.parquet"), "bb")
	describe := func() statsfile.Input {
		t.Helper()
		in, err := Describe(dir)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	first := describe()
	if first.Size != 6 {
		t.Errorf("size %d, want 6", first.Size)
	}
	write(filepath.Join(dir, ".b.parquet.crc"), "crc")
	if got := describe(); got.Fingerprint != first.Fingerprint {
		t.Error("a hidden file changed the fingerprint")
	}
	write(filepath.Join(sub, "b.parquet"), "bbb") // in place: dir's own time unchanged
	second := describe()
	if second.Fingerprint == first.Fingerprint || second.Size != 7 {
		t.Errorf("a file rewritten in a subdirectory: fingerprint %s (was %s), size %d", second.Fingerprint, first.Fingerprint, second.Size)
	}
	write(filepath.Join(sub, "c.parquet"), "c")
	if third := describe(); third.Fingerprint == second.Fingerprint {
		t.Error("a file added to a subdirectory left the fingerprint")
	}
}
