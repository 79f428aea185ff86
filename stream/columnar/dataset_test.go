package columnar

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// writePart writes docs[lo:hi] to path (its directory made) in the format
// its name says.
func writePart(t *testing.T, path string, docs *stream.Docs, lo, hi, terms int, vocab []string) {
	t.Helper()
	part := &stream.Docs{Offsets: []int{0}}
	for i := lo; i < hi; i++ {
		part.AppendDoc(docs.Doc(i))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeDocs(t, path, part, stream.WriteOptions{Terms: terms, Vocab: vocab})
}

// testVocab returns n distinct words starting with prefix.
func testVocab(prefix string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = prefix + string(rune('a'+i/26)) + string(rune('a'+i%26))
	}
	return v
}

// A directory of Parquet parts, in partition subdirectories and beside the
// files other writers leave (_SUCCESS, .crc), reads as the documents of
// the parts one after the other, numbered on across them, whatever the
// batch size.
func TestDatasetDocs(t *testing.T) {
	docs, _ := fixtureDocs(false)
	vocab := testVocab("w", 60)
	dir := t.TempDir()
	// Parts in WalkDir order: a.parquet, then year=1/b.parquet, year=2/c.parquet.
	writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 100, 60, vocab)
	writePart(t, filepath.Join(dir, "year=1", "b.parquet"), docs, 100, 101, 60, vocab)
	writePart(t, filepath.Join(dir, "year=2", "c.parquet"), docs, 101, 300, 60, vocab)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, ".a.parquet.crc"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "_temporary"), 0o755)
	os.WriteFile(filepath.Join(dir, "_temporary", "junk.txt"), []byte("junk"), 0o644)

	f, err := stream.Detect(dir, "")
	if err != nil || f.Name != FormatDataset {
		t.Fatalf("detected %q, %v; want %s", f.Name, err, FormatDataset)
	}
	for _, batch := range []int{7, 64, 4096} {
		src, err := stream.Open(dir, stream.Options{BatchRows: batch})
		if err != nil {
			t.Fatal(err)
		}
		info := src.Info()
		if info.Rows != 300 || info.Terms != 60 || !slices.Equal(info.Vocab, vocab) {
			t.Fatalf("info %+v", info)
		}
		var next int64
		got := &stream.Docs{Offsets: []int{0}}
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if b.Start != next {
				t.Fatalf("batch %d: starts at %d after %d documents", batch, b.Start, next)
			}
			next += int64(b.Len())
			for i := range b.Len() {
				got.AppendDoc(b.Doc(i))
			}
			b.Release()
		}
		if !slices.Equal(got.Offsets, docs.Offsets) || !slices.Equal(got.Terms, docs.Terms) || !slices.Equal(got.Counts, docs.Counts) {
			t.Fatalf("batch %d: the dataset's documents differ from the parts'", batch)
		}
		stream.Close(src)
	}
}

// What cannot be one dataset is refused, naming the file.
func TestDatasetRefusals(t *testing.T) {
	docs, _ := fixtureDocs(false)
	vocab, other := testVocab("w", 60), testVocab("v", 60)
	cases := []struct {
		name  string
		setup func(dir string)
		want  error
		file  string
	}{
		{"stray file", func(dir string) {
			writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 10, 60, vocab)
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
		}, stream.ErrFormat, "notes.txt"},
		{"mixed formats", func(dir string) {
			writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 10, 60, vocab)
			writePart(t, filepath.Join(dir, "b.arrow"), docs, 10, 20, 60, vocab)
		}, stream.ErrFormat, "b.arrow"},
		{"other vocabulary", func(dir string) {
			writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 10, 60, vocab)
			writePart(t, filepath.Join(dir, "b.parquet"), docs, 10, 20, 60, other)
		}, stream.ErrSchema, "b.parquet"},
		{"other vocabulary size", func(dir string) {
			writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 10, 60, nil)
			writePart(t, filepath.Join(dir, "b.parquet"), docs, 10, 20, 70, nil)
		}, stream.ErrSchema, "b.parquet"},
		{"damaged part", func(dir string) {
			writePart(t, filepath.Join(dir, "a.parquet"), docs, 0, 10, 60, vocab)
			os.WriteFile(filepath.Join(dir, "b.parquet"), []byte("PAR1 not really"), 0o644)
		}, nil, "b.parquet"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		c.setup(dir)
		_, err := stream.Open(dir, stream.Options{})
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.file) {
			t.Errorf("%s: %v; want an error (%v) naming %s", c.name, err, c.want, c.file)
		}
	}
	// A directory of text files is not a dataset (package text claims it).
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644)
	if f, err := stream.Detect(dir, ""); err == nil && f.Name == FormatDataset {
		t.Errorf("a directory of text files detected as a dataset")
	}
}
