package text

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
)

func TestDir(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{
		"b.txt":        []byte("second file\nstill second"),
		"a.txt":        []byte("first"),
		"sub/c.txt.gz": compress(t, "gzip", []byte("gzipped")),
		"sub/d.zst":    compress(t, "zstd", []byte("zstd\xff")),
		"sub/deeper/e": nil,
		"z.txt":        []byte("last"),
		".hidden":      []byte("skipped"),
		".git/HEAD":    []byte("skipped"),
		"sub/.swp":     []byte("skipped"),
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		writeFile(t, p, data)
	}
	want := []string{"first", "second file\nstill second", "gzipped", "zstd\uFFFD", "", "last"}
	for _, rows := range []int{1, 4, 100} {
		src, err := stream.OpenText(root, stream.Options{BatchRows: rows, Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		if info := src.Info(); info.Format != "text-dir" || info.Rows != int64(len(want)) {
			t.Fatalf("info %+v", info)
		}
		for pass := 0; pass < 2; pass++ {
			got, err := collectTexts(t, src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d rows per batch: %q", rows, got)
			}
		}
	}
	// DirPaths names the documents in the same order.
	var paths []string
	for p, err := range DirPaths(context.Background(), root) {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if wantPaths := []string{"a.txt", "b.txt", "sub/c.txt.gz", "sub/d.zst", "sub/deeper/e", "z.txt"}; !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("DirPaths %q, want %q", paths, wantPaths)
	}
}

func TestDirErrors(t *testing.T) {
	root := t.TempDir()
	if _, err := OpenDir(root, stream.Options{}); !errors.Is(err, stream.ErrEmpty) || !strings.Contains(err.Error(), root) {
		t.Fatalf("empty directory: %v", err)
	}
	missing := filepath.Join(root, "missing")
	if _, err := OpenDir(missing, stream.Options{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing directory: %v", err)
	}
	file := filepath.Join(root, "f.txt")
	writeFile(t, file, []byte("x"))
	if _, err := OpenDir(file, stream.Options{}); !errors.Is(err, stream.ErrFormat) {
		t.Fatalf("file as directory: %v", err)
	}

	dangling := filepath.Join(root, "dangling.txt")
	if err := os.Symlink(filepath.Join(root, "nowhere"), dangling); err == nil {
		if _, err := OpenDir(root, stream.Options{}); err == nil || !strings.Contains(err.Error(), dangling) {
			t.Fatalf("dangling link: %v", err)
		}
		os.Remove(dangling)
	}

	locked := filepath.Join(root, "locked")
	os.Mkdir(locked, 0o755)
	writeFile(t, filepath.Join(locked, "x.txt"), []byte("x"))
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o755)
	if _, err := os.ReadDir(locked); err == nil {
		t.Skip("running with privileges that ignore permissions")
	}
	if _, err := OpenDir(root, stream.Options{}); err == nil || !strings.Contains(err.Error(), locked) {
		t.Fatalf("unreadable directory: %v", err)
	}
}

func TestDirCorruptFile(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), []byte("fine"))
	data := compress(t, "gzip", []byte(strings.Repeat("text ", 1000)))
	bad := filepath.Join(root, "b.txt.gz")
	writeFile(t, bad, data[:len(data)/2])
	src, err := OpenDir(root, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collectTexts(t, src); !errors.Is(err, stream.ErrCorrupt) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("truncated gzip file: %v", err)
	}
}

// The tree is walked again on each pass; files added after OpenDir make the
// pass fail rather than shift documents silently.
func TestDirChangedBetweenPasses(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i%3))
		os.MkdirAll(dir, 0o755)
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprint("doc ", i)))
	}
	src, err := OpenDir(root, stream.Options{BatchRows: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collectTexts(t, src)
	if err != nil || len(got) != 30 || got[0] != "doc 0" || got[1] != "doc 3" || got[10] != "doc 1" {
		t.Fatalf("%v: %q", err, got)
	}
	writeFile(t, filepath.Join(root, "d01", "new.txt"), []byte("late"))
	if _, err := collectTexts(t, src); !errors.Is(err, stream.ErrChanged) || !strings.Contains(err.Error(), "30 files, now 31") {
		t.Fatalf("changed directory: %v", err)
	}
	os.Remove(filepath.Join(root, "d01", "new.txt"))
	// A file rewritten with the same size: only its time tells.
	f := filepath.Join(root, "d02", "f05.txt")
	writeFile(t, f, []byte("doc X"))
	later := time.Now().Add(time.Second)
	os.Chtimes(f, later, later)
	if _, err := collectTexts(t, src); !errors.Is(err, stream.ErrChanged) || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "rewritten") {
		t.Fatalf("a file rewritten: %v", err)
	}
}

// Binary files in a directory of text files are passed over as grep does:
// read as empty documents (document i stays the i-th file) and counted in
// one warning that names a few of them, given once.
func TestDirBinaryFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), []byte("alpha beta"))
	for i := range 5 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("b%d.bin", i)), []byte("PNG\x00\x01 alpha beta gamma"))
	}
	writeFile(t, filepath.Join(root, "c.txt.gz"), compress(t, "gzip", []byte("x\x00y")))
	writeFile(t, filepath.Join(root, "d.txt"), []byte("delta"))
	var warnings []string
	src, err := OpenDir(root, stream.Options{BatchRows: 2, Workers: 2, Warn: stream.NewWarner(func(m string) { warnings = append(warnings, m) })})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := collectTexts(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"alpha beta", "", "", "", "", "", "", "delta"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "6 binary files") || !strings.Contains(warnings[0], "b0.bin, b1.bin, b2.bin and 3 more") {
		t.Fatalf("warnings %q", warnings)
	}
}
