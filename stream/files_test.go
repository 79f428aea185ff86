package stream_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

// dirFS serves dirfs://ROOT/... from the local directory ROOT through the
// FileSystem interface, with files that are not *os.File (so the readers
// take the paths they take for an object store's files: no memory
// mapping, directories listed through ReadDir).
type dirFS struct{}

// remoteFile hides the *os.File from type assertions.
type remoteFile struct{ f *os.File }

func (r remoteFile) Read(p []byte) (int, error)              { return r.f.Read(p) }
func (r remoteFile) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }
func (r remoteFile) Seek(off int64, whence int) (int64, error) {
	return r.f.Seek(off, whence)
}
func (r remoteFile) Close() error               { return r.f.Close() }
func (r remoteFile) Stat() (fs.FileInfo, error) { return r.f.Stat() }

func local(path string) string { return "/" + strings.TrimPrefix(path, "dirfs://") }

func (dirFS) Open(path string) (stream.File, error) {
	f, err := os.Open(local(path))
	if err != nil {
		return nil, err
	}
	return remoteFile{f}, nil
}

func (dirFS) Stat(path string) (fs.FileInfo, error) { return os.Stat(local(path)) }

func (dirFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(local(path)) }

func init() { stream.RegisterFileSystem("dirfs", dirFS{}) }

// remote is the dirfs:// path of the local absolute path p.
func remote(p string) string { return "dirfs://" + strings.TrimPrefix(p, "/") }

// TestFileSystemReadsLikeLocal reads the same documents from local files
// and through a registered FileSystem (Parquet, Arrow IPC file and
// stream, docword plain and compressed with the vocabulary found beside
// it, text lines with a vocabulary, a dataset directory with a partition
// subdirectory), and checks that every pass yields the same batches and
// that the provenance of each input is the same.
func TestFileSystemReadsLikeLocal(t *testing.T) {
	if got := stream.Scheme("gs://b/k"); got != "gs" {
		t.Errorf("Scheme(gs://b/k) = %q", got)
	}
	for _, p := range []string{"/a/b", `C:\a`, "a://", "./x://y"} {
		if s := stream.Scheme(p); s != "" && p != "a://" {
			t.Errorf("Scheme(%q) = %q, want none", p, s)
		}
	}
	dir := t.TempDir()
	vocab := []string{"ball", "goal", "team", "bread", "salt"}
	docs := [][2][]int32{{{0, 1, 2}, {2, 1, 1}}, {{3, 4}, {1, 3}}, {{1}, {4}}, {{0, 4}, {1, 1}}, {{2}, {2}}}
	write := func(name string, lo, hi int) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := stream.Create(path, stream.WriteOptions{Terms: len(vocab), Vocab: vocab, RowGroupRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		b := stream.NewDocs(0)
		for _, d := range docs[lo:hi] {
			b.AppendDoc(d[0], d[1])
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	vocabFile := filepath.Join(dir, "words.txt")
	if err := os.WriteFile(vocabFile, []byte(strings.Join(vocab, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(lines, []byte("ball ball goal team\nbread salt salt salt\n\ngoal goal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("set/part-0.parquet", 0, 2)
	write("set/year=2024/part-1.parquet", 2, 5)
	// Left out of the dataset by its name.
	if err := os.WriteFile(filepath.Join(dir, "set/_SUCCESS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []struct {
		path string
		o    stream.Options
	}{
		{write("c.parquet", 0, 5), stream.Options{}},
		{write("c.arrow", 0, 5), stream.Options{}},
		{write("c.arrows", 0, 5), stream.Options{}},
		{write("docword.c.txt", 0, 5), stream.Options{}},
		{write("docword.z.txt.gz", 0, 5), stream.Options{}},
		{lines, stream.Options{VocabPath: vocabFile}},
		{filepath.Join(dir, "set"), stream.Options{}},
	}
	os.WriteFile(filepath.Join(dir, "vocab.c.txt"), []byte(strings.Join(vocab, "\n")+"\n"), 0o644)
	for _, in := range inputs {
		t.Run(filepath.Base(in.path), func(t *testing.T) {
			want := readAll(t, in.path, in.o)
			o := in.o
			if o.VocabPath != "" {
				o.VocabPath = remote(o.VocabPath)
			}
			got := readAll(t, remote(in.path), o)
			if got != want {
				t.Errorf("through the file system:\n%s\nlocally:\n%s", got, want)
			}
			a, err := shard.Describe(in.path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := shard.Describe(remote(in.path))
			if err != nil {
				t.Fatal(err)
			}
			if a.Fingerprint != b.Fingerprint || a.Size != b.Size || !a.ModTime.Equal(b.ModTime) {
				t.Errorf("provenance %+v through the file system, %+v locally", b, a)
			}
		})
	}
	files, err := columnar.DatasetFiles(remote(filepath.Join(dir, "set")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{remote(filepath.Join(dir, "set/part-0.parquet")), remote(filepath.Join(dir, "set/year=2024/part-1.parquet"))}
	if !slices.Equal(files, want) {
		t.Errorf("dataset files %q, want %q", files, want)
	}
	if _, err := stream.Open("nofs://b/c.parquet", stream.Options{}); err == nil || !strings.Contains(err.Error(), "no file system for nofs://") {
		t.Errorf("a path of an unregistered scheme: %v", err)
	}
}

// readAll returns the documents of two passes over path, printed.
func readAll(t *testing.T, path string, o stream.Options) string {
	t.Helper()
	src, err := stream.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	var s strings.Builder
	fmt.Fprintf(&s, "%d terms %q\n", src.Info().Terms, src.Info().Vocab)
	for pass := range 2 {
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				fmt.Fprintf(&s, "%d: %d %v %v\n", pass, b.Start+int64(i), terms, counts)
			}
			b.Release()
		}
	}
	return s.String()
}
