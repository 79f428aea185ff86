package stream

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.parquet")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Detect(empty, ""); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := Detect(filepath.Join(dir, "missing"), ""); err == nil {
		t.Fatal("missing file detected")
	}
	odd := filepath.Join(dir, "data.xyz")
	os.WriteFile(odd, []byte("hello"), 0o644)
	if _, err := Detect(odd, "nonsense"); !errors.Is(err, ErrFormat) {
		t.Fatalf("unknown forced format: %v", err)
	}
	Register(Format{Name: "test-xyz", Match: func(p string, head []byte) int {
		if strings.HasSuffix(p, ".xyz") {
			return 1
		}
		return 0
	}})
	t.Cleanup(func() { // so that -count N registers it afresh
		formatsMu.Lock()
		delete(formats, "test-xyz")
		formatsMu.Unlock()
	})
	f, err := Detect(odd, "")
	if err != nil || f.Name != "test-xyz" {
		t.Fatalf("detected %q, %v", f.Name, err)
	}
	if _, err := Open(odd, Options{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("format without documents: %v", err)
	}
	if _, err := Create(filepath.Join(dir, "out.unknownext"), WriteOptions{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("create with unknown format: %v", err)
	}
}

func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	f, err := CreateAtomic(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("final name visible before commit")
	}
	f.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("abort left %v", ents)
	}
	if err := WriteFileAtomic(p, []byte("done")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "done" {
		t.Fatalf("read back %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}

	// Errors name the final path, never the temporary one; CheckWritable
	// finds an unwritable place before anything is written and leaves
	// nothing behind.
	missing := filepath.Join(dir, "no", "such", "dir", "out.json")
	for _, err := range []error{CheckWritable(missing), WriteFileAtomic(missing, nil)} {
		if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), ".tmp") || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("error %v; want one naming %s", err, missing)
		}
	}
	if err := CheckWritable(p); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("CheckWritable left files: %v", ents)
	}
}

func TestVocabFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vocab.txt")
	if err := WriteVocab(p, []string{"apple", "pear"}); err != nil {
		t.Fatal(err)
	}
	w, err := ReadVocab(p)
	if err != nil || len(w) != 2 || w[1] != "pear" {
		t.Fatalf("%v %v", w, err)
	}
	os.WriteFile(p, []byte("a\nb\na\n"), 0o644)
	if _, err := ReadVocab(p); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("duplicate word: %v", err)
	}
	os.WriteFile(p, nil, 0o644)
	if _, err := ReadVocab(p); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty vocabulary: %v", err)
	}
}

func TestValidate(t *testing.T) {
	b := NewDocs(10)
	b.AppendDoc([]int32{0, 3}, []int32{1, 2})
	b.AppendDoc(nil, nil)
	if err := b.Validate(4); err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(3); err == nil || !strings.Contains(err.Error(), "document 10") {
		t.Fatalf("term outside vocabulary: %v", err)
	}
	b.AppendDoc([]int32{1, 1}, []int32{1, 1})
	if err := b.Validate(4); err == nil || !strings.Contains(err.Error(), "document 12") {
		t.Fatalf("duplicate term: %v", err)
	}
	c := NewDocs(0)
	c.AppendDoc([]int32{1}, []int32{-1})
	if err := c.Validate(4); err == nil {
		t.Fatal("negative count accepted")
	}
	if c.Clone().Length(0) != -1 || b.Tokens() != 5 || b.Len() != 3 || b.NNZ() != 4 {
		t.Fatal("batch accessors wrong")
	}
}
